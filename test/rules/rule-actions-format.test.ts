import { beforeAll, describe, expect, it } from 'vitest'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { afterValues, CORPUS, expectAfter } from './rule-corpus.js'
import { importedSite, preview } from './rule-fixture.js'

// The actions that format a value (case, trim, strip_html, round, truncate, default_if_empty) and
// exclude, previewed as drafts on the shared catalog (rule-corpus.ts): blanks, unicode, emoji and CJK
// text, and numbers that are and are not numbers.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })
const NBSP = '\u00a0'

let f: ImportFixture
beforeAll(async () => {
  f = await importFixture(t)
  await importedSite(f, CORPUS)
})

const action = (attribute: string, then: Record<string, unknown>) => ({ attribute, then: [then] })

describe('case', () => {
  it('lower and upper change letters of every script that has case, umlauts and accents too', async () => {
    await expectAfter(f, action('title', { action: 'case', to: 'lower' }), {
      blank: 'äpfel & straße',
      accents: 'hello world élan',
      cjk: '日本語のテキストです',
      emoji: '😀😀😀 😀😀😀',
      'only-id': '',
    })
    await expectAfter(f, action('brand', { action: 'case', to: 'upper' }), {
      full: 'ACME',
      missing: 'MÜLLER',
      accents: 'ÉMILE',
      cjk: '無印良品',
      emoji: '🚀 ROCKET',
      quote: "O'NEIL",
    })
  })

  it('title starts each word with a capital, the rest small', async () => {
    await expectAfter(f, action('title', { action: 'case', to: 'title' }), {
      accents: 'Hello World Élan',
      blank: 'Äpfel & Straße',
      long: 'The Quick Brown Fox Jumps',
      apos: "O'Neil Mcdonald-Smith 3d",
      'only-id': '',
    })
  })

  it('sentence starts the value with a capital, after any leading blanks, the rest small', async () => {
    await expectAfter(f, action('title', { action: 'case', to: 'sentence' }), {
      accents: 'Hello world élan',
      blank: 'Äpfel & straße',
      sentence: '  Lower start',
      emoji: '😀😀😀 😀😀😀',
      'only-id': '',
    })
    await expectAfter(f, action('description', { action: 'case', to: 'sentence' }), { sentence: 'Émile zola' })
  })
})

describe('trim', () => {
  it('trims blanks (NBSP and tabs too) and collapses inner runs to one space', async () => {
    await expectAfter(f, action('material', { action: 'trim' }), { cjk: 'Hello World', full: 'Colour colour COLOUR', 'only-id': '' })
    await expectAfter(f, action('title', { action: 'trim' }), {
      tabbed: 'Tab bed title',
      'ws-nbsp': '',
      'ws-tabs': '',
      'ws-ideo': '',
      sentence: 'lower start',
    })
  })
})

describe('strip_html', () => {
  it('takes the tags out, then decodes entities (once: an encoded entity stays one)', async () => {
    await expectAfter(f, action('description', { action: 'strip_html' }), {
      full: 'Fish & Chips',
      missing: '<b>bold</b>',
      blank: 'äé &lt; &#0;',
      accents: 'Größe: M',
      emoji: `${NBSP}x${NBSP}`,
      'html-nested': 'One Two & three',
      'html-entities': '"Café" €5 €6 😀',
      'html-text': '2 < 3 and 5 > 4',
      empty: 'plain text',
      'only-id': '',
    })
  })

  it('leaves a space where a line or a block ended, and one space where tags left several', async () => {
    const rule = {
      attribute: 'title',
      then: [{ action: 'set', value: 'a<br>b<BR/>c<p>d</p><p class="x">e</p> <span>f</span>g  <li>h' }, { action: 'strip_html' }],
    }
    await expectAfter(f, rule, { full: 'a b c d e fg h' })
  })
})

describe('round', () => {
  const round = (more: Record<string, unknown> = {}) => action('price', { action: 'round', ...more })

  it('rounds numbers half up to two decimals by default, written with that many; keeps what is no number', async () => {
    await expectAfter(f, round(), {
      full: '20.00',
      empty: '19.50',
      missing: '19,99',
      blank: '-2.35',
      accents: 'n/a',
      emoji: '123456789012345678901234567890.13',
      cjk: '5.00',
      long: '0.50',
      word: '5.00',
      tabbed: '7.25',
      'num-exp': '100000.00',
      'num-dash': '-',
      'num-dot': '.',
      'num-signs': '+-1',
      'num-tiny': '0.00',
      'num-big': '12345678901234567890.00',
      'num-nbsp': '19.50',
      'ws-ideo': '7.00',
      'num-long': `0.${'1'.repeat(20_000)}`,
      'num-spaced': '1 000',
      'num-euro': '12.50 EUR',
      'only-id': '',
    })
  })

  it('rounds half away from zero, up or down, to whole numbers', async () => {
    await expectAfter(f, round({ decimals: 0 }), { 'num-half': '3', 'num-neg-half': '-3', full: '20', 'num-up': '19', 'num-zero': '0' })
    await expectAfter(f, round({ decimals: 0, mode: 'up' }), { 'num-half': '3', 'num-up': '20', full: '20', 'num-zero': '0', missing: '19,99' })
    await expectAfter(f, round({ decimals: 0, mode: 'down' }), { 'num-half': '2', 'num-up': '19', full: '19', 'num-zero': '0' })
    await expectAfter(f, round({ decimals: 2, mode: 'up' }), { 'num-up': '19.01', full: '20.00', empty: '19.50' })
    await expectAfter(f, round({ decimals: 6 }), { full: '19.999000', blank: '-2.345000' })
  })
})

describe('truncate', () => {
  const truncate = (max: number, suffix?: string) => action('title', { action: 'truncate', max, ...(suffix === undefined ? {} : { suffix }) })

  it('cuts at the last word boundary within max, or within a longer word; a value within max stays', async () => {
    await expectAfter(f, truncate(20), { long: 'The quick brown fox', word: 'Supercalifragilistic', full: 'Shirt', 'only-id': '' })
    await expectAfter(f, truncate(10), { long: 'The quick', word: 'Supercalif', tabbed: 'Tab\tbed' })
    await expectAfter(f, truncate(5), { 'equal-len': '12345', accents: 'hello', word: 'Super' })
  })

  it('counts characters, not bytes or UTF-16 units: emoji and CJK', async () => {
    await expectAfter(f, truncate(5), { emoji: '😀😀😀', cjk: '日本語のテ' })
    await expectAfter(f, truncate(7), { emoji: '😀😀😀 😀😀😀' })
  })

  it('keeps room for the suffix', async () => {
    await expectAfter(f, truncate(20, '…'), { long: 'The quick brown fox…', word: 'Supercalifragilistic' })
    await expectAfter(f, truncate(12, '...'), { long: 'The quick...', word: 'Supercali...' })
    await expectAfter(f, truncate(5, '…'), { emoji: '😀😀😀…', cjk: '日本語の…' })
  })
})

describe('default_if_empty', () => {
  it('fills an empty, blank or missing value and keeps any other', async () => {
    await expectAfter(f, action('color', { action: 'default_if_empty', value: 'multicolor' }), {
      full: 'red',
      empty: 'multicolor',
      missing: 'multicolor',
      blank: 'multicolor',
      tabbed: 'multicolor',
      'ws-ideo': 'multicolor',
      cjk: '白',
      'only-id': 'multicolor',
    })
    await expectAfter(f, action('color', { action: 'default_if_empty', value: 'like {brand}' }), { missing: 'like Müller', full: 'red' })
  })
})

describe('exclude', () => {
  const outOfStock = { if: { all: [{ attribute: 'availability', operator: 'equals', value: 'OUT OF STOCK' }] }, then: [{ action: 'exclude' }] }

  it('takes the products it matches out of the stage: no after, no later rule, counted in the summary', async () => {
    const later = { attribute: 'title', then: [{ action: 'append', value: '*' }] }
    const found = await preview(f, { rules: [outOfStock, later], ids: ['empty', 'full'] })
    const [excluded, kept] = found.products
    expect(excluded).toMatchObject({ id: 'empty', excluded: true, after: null })
    expect(excluded?.steps.map((step) => [step.matched, step.excluded])).toEqual([
      [true, true],
      [false, false],
    ])
    expect(kept).toMatchObject({ id: 'full', excluded: false, after: { title: 'Shirt*' } })
    expect(found.summary).toMatchObject({ products: CORPUS.length, excluded: 1, changed: CORPUS.length - 1 })
    expect(found.summary?.rules.map((rule) => rule.matched)).toEqual([1, CORPUS.length - 1])
  })

  it('excludes in else where the condition does not hold', async () => {
    const priced = {
      attribute: 'label',
      if: { all: [{ attribute: 'price', operator: 'greater_or_equal', value: '0' }] },
      then: [{ action: 'set', value: 'priced' }],
      else: [{ action: 'exclude' }],
    }
    expect(await afterValues(f, [priced], 'label', ['full', 'accents', 'num-zero', 'blank', 'only-id'])).toEqual({
      full: 'priced',
      accents: null,
      'num-zero': 'priced',
      blank: null,
      'only-id': null,
    })
  })
})
