import { beforeAll, describe, it } from 'vitest'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { CORPUS, expectAfter } from './rule-corpus.js'
import { importedSite } from './rule-fixture.js'

// The value actions that build and rewrite texts (set, copy, append, prepend, concat, replace, map,
// regex_replace, split_take) on one imported catalog, each previewed as a draft on the products that
// show what it does with empty and missing values, case, unicode and special characters.
// rule-actions-format.test.ts has the formatting ones, rule-actions-export.test.ts the export.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

let f: ImportFixture
beforeAll(async () => {
  f = await importFixture(t)
  await importedSite(f, CORPUS)
})

describe('set, copy', () => {
  it('set fills {attribute} references with each product’s values, missing ones as empty', async () => {
    await expectAfter(
      f,
      { attribute: 'title', then: [{ action: 'set', value: '{brand} – {title} ({color})' }] },
      {
        full: 'Acme – Shirt (red)',
        empty: 'Bolt – Hat ()',
        missing: 'Müller –  ()',
        emoji: '🚀 Rocket – 😀😀😀 😀😀😀 (绿色)',
        'only-id': ' –  ()',
      },
    )
  })

  it('set keeps braces that name nothing, reads an unknown attribute as empty, and creates its attribute', async () => {
    const rule = { attribute: 'label', then: [{ action: 'set', value: '{{brand}} {} {nope}!' }] }
    await expectAfter(f, rule, { full: '{Acme} {} !', cjk: '{無印良品} {} !', 'only-id': '{} {} !' })
  })

  it('the actions of a rule run in order, each reading what the one before wrote', async () => {
    const rule = {
      attribute: 'label',
      then: [
        { action: 'set', value: '{color}' },
        { action: 'set', value: '{label}/{label}' },
      ],
    }
    await expectAfter(f, rule, { full: 'red/red', emoji: '绿色/绿色', 'only-id': '/' })
  })

  it('copy takes another attribute’s value, empty when it has none', async () => {
    await expectAfter(f, { attribute: 'gtin_copy', then: [{ action: 'copy', from: 'gtin' }] }, { full: '4006381333931', missing: '', 'only-id': '' })
    await expectAfter(
      f,
      { attribute: 'title', then: [{ action: 'copy', from: 'brand' }] },
      { full: 'Acme', cjk: '無印良品', blank: '  ', long: 'Zed', word: '' },
    )
  })
})

describe('append, prepend', () => {
  it('append adds the value after a separator; nothing when the value is empty or blank; no separator on an empty value', async () => {
    await expectAfter(
      f,
      { attribute: 'title', then: [{ action: 'append', value: '{size}', separator: ' - ' }] },
      {
        full: 'Shirt - XL',
        empty: 'Hat',
        missing: 'M',
        blank: 'ÄPFEL & Straße',
        long: 'The quick brown fox jumps - S',
        emoji: '😀😀😀 😀😀😀',
        'only-id': '',
      },
    )
    await expectAfter(f, { attribute: 'title', then: [{ action: 'append', value: '!' }] }, { full: 'Shirt!', missing: '!', cjk: '日本語のテキストです!' })
  })

  it('prepend puts the value and the separator before the value', async () => {
    await expectAfter(
      f,
      { attribute: 'title', then: [{ action: 'prepend', value: '{brand}', separator: ': ' }] },
      {
        full: 'Acme: Shirt',
        missing: 'Müller',
        blank: 'ÄPFEL & Straße',
        cjk: '無印良品: 日本語のテキストです',
        emoji: '🚀 Rocket: 😀😀😀 😀😀😀',
        'brand-only': 'Solo',
        'only-id': '',
      },
    )
  })
})

describe('concat', () => {
  it('joins attributes and literals with the separator, skipping empty and blank parts', async () => {
    const parts = [{ attribute: 'brand' }, { value: '-' }, { attribute: 'title' }, { attribute: 'color' }, { value: '' }]
    await expectAfter(
      f,
      { attribute: 'title', then: [{ action: 'concat', parts }] },
      {
        full: 'Acme - Shirt red',
        empty: 'Bolt - Hat',
        missing: 'Müller -',
        blank: '- ÄPFEL & Straße',
        emoji: '🚀 Rocket - 😀😀😀 😀😀😀 绿色',
        'only-id': '-',
      },
    )
  })

  it('takes another separator, and is empty when every part is', async () => {
    const rule = { attribute: 'variant', then: [{ action: 'concat', parts: [{ attribute: 'color' }, { attribute: 'size' }], separator: ', ' }] }
    await expectAfter(f, rule, { full: 'red, XL', empty: '', missing: 'M', tabbed: '', long: 'S', 'only-id': '' })
  })
})

describe('replace', () => {
  it('replaces every occurrence, case-sensitive unless told', async () => {
    const find = { action: 'replace', find: 'colour', replacement: 'color' }
    await expectAfter(f, { attribute: 'material', then: [find] }, { full: 'Colour color COLOUR', empty: 'Straße Maß', 'only-id': '' })
    await expectAfter(f, { attribute: 'material', then: [{ ...find, case_sensitive: false }] }, { full: 'color color color' })
  })

  it('replaces unicode text, ignoring case across umlauts when told', async () => {
    await expectAfter(f, { attribute: 'material', then: [{ action: 'replace', find: 'ß', replacement: 'ss' }] }, { empty: 'Strasse Mass' })
    const umlaut = { action: 'replace', find: 'ä', replacement: 'ae' }
    await expectAfter(f, { attribute: 'material', then: [umlaut] }, { accents: 'ÄÄ aeae' })
    await expectAfter(f, { attribute: 'material', then: [{ ...umlaut, case_sensitive: false }] }, { accents: 'aeae aeae' })
    await expectAfter(f, { attribute: 'material', then: [{ action: 'replace', find: '🍎', replacement: '🍏' }] }, { emoji: '🍏 and 🍏' })
  })

  it('takes find and replacement as plain text: no pattern, no group reference, with or without case', async () => {
    const literal = { action: 'replace', find: '.*', replacement: '$1\\&' }
    await expectAfter(f, { attribute: 'material', then: [literal] }, { missing: 'a$1\\&b A$1\\&B', full: 'Colour colour COLOUR' })
    await expectAfter(f, { attribute: 'material', then: [{ ...literal, case_sensitive: false }] }, { missing: 'a$1\\&b A$1\\&B', full: 'Colour colour COLOUR' })
  })
})

describe('map', () => {
  const entries = { 'in stock': 'in_stock', 'out of stock': 'out_of_stock', vorrätig: 'in_stock' }

  it('maps the whole value ignoring case (umlauts too) and keeps a value it does not list', async () => {
    await expectAfter(
      f,
      { attribute: 'availability', then: [{ action: 'map', entries }] },
      {
        full: 'in_stock',
        empty: 'out_of_stock',
        missing: 'in_stock',
        blank: 'in stock ',
        accents: 'preorder',
        emoji: '',
        cjk: 'in_stock',
        'map-exact': 'in_stock',
        'only-id': '',
      },
    )
  })

  it('gives the default to every value it does not list, empty and missing ones too', async () => {
    await expectAfter(
      f,
      { attribute: 'availability', then: [{ action: 'map', entries, default: 'unknown' }] },
      { full: 'in_stock', blank: 'unknown', accents: 'unknown', emoji: 'unknown', 'map-other': 'unknown', 'only-id': 'unknown' },
    )
  })

  it('matches case exactly when told', async () => {
    const exact = { action: 'map', entries: { 'in stock': 'in_stock', 'IN STOCK': 'IN_STOCK' }, case_sensitive: true }
    await expectAfter(f, { attribute: 'availability', then: [exact] }, { full: 'In Stock', 'map-exact': 'in_stock', cjk: 'IN_STOCK', missing: 'VORRÄTIG' })
  })
})

describe('regex_replace', () => {
  it('replaces every match with $1 and $& filled in, case-sensitive unless told', async () => {
    const units = { action: 'regex_replace', pattern: '([0-9]+) ?cm', replacement: '$1 cm' }
    await expectAfter(f, { attribute: 'material', then: [units] }, { blank: 'Länge 30 cm, Breite 20 CM', full: 'Colour colour COLOUR' })
    await expectAfter(f, { attribute: 'material', then: [{ ...units, case_sensitive: false }] }, { blank: 'Länge 30 cm, Breite 20 cm' })
    const whole = { action: 'regex_replace', pattern: '[0-9]+', replacement: '<$&>' }
    await expectAfter(f, { attribute: 'material', then: [whole] }, { blank: 'Länge <30>cm, Breite <20> CM', 'only-id': '' })
  })

  it('ignores case across umlauts when told, and matches emoji', async () => {
    const cm = { action: 'regex_replace', pattern: 'cm', replacement: 'mm' }
    await expectAfter(f, { attribute: 'material', then: [cm] }, { 'regex-many': 'mm mm CM cM' })
    await expectAfter(f, { attribute: 'material', then: [{ ...cm, case_sensitive: false }] }, { 'regex-many': 'mm mm mm mm' })
    const umlauts = { action: 'regex_replace', pattern: 'ä+', replacement: 'ae', case_sensitive: false }
    await expectAfter(f, { attribute: 'material', then: [umlauts] }, { accents: 'ae ae' })
    await expectAfter(f, { attribute: 'material', then: [{ action: 'regex_replace', pattern: '🍎|🍏', replacement: 'fruit' }] }, { emoji: 'fruit and fruit' })
  })

  it('writes a backslash of the replacement as it is', async () => {
    await expectAfter(f, { attribute: 'material', then: [{ action: 'regex_replace', pattern: 'and', replacement: '\\' }] }, { emoji: '🍎 \\ 🍏' })
  })
})

describe('split_take', () => {
  const split = (more: Record<string, unknown>) => ({ attribute: 'category', then: [{ action: 'split_take', separator: ' > ', ...more }] })

  it('takes the first part by default, the whole value when it has no separator', async () => {
    await expectAfter(f, split({}), { full: 'Home', empty: 'Toys', missing: '', blank: 'Garden', cjk: '服', emoji: '🍎', 'only-id': '' })
  })

  it('counts a negative from from the end', async () => {
    await expectAfter(f, split({ from: -1 }), { full: 'Knives', empty: 'Toys', missing: '', blank: 'Tools', emoji: '🍐', 'split-end': '' })
    await expectAfter(f, split({ from: -4, count: 3 }), { 'split-many': 'b > c > d', full: 'Home > Kitchen', empty: '' })
  })

  it('takes count parts from a 0-based from, joined by join (the separator unless told); nothing past the end', async () => {
    await expectAfter(f, split({ from: 1, count: 2, join: '/' }), { full: 'Kitchen/Knives', 'split-many': 'b/c', empty: '', emoji: '🍏/🍐', blank: '/Tools' })
    await expectAfter(f, split({ from: -2, count: 5 }), { full: 'Kitchen > Knives', 'split-many': 'd > e', empty: 'Toys' })
    await expectAfter(f, split({ from: 10 }), { full: '', empty: '' })
    await expectAfter(f, split({ from: -10 }), { full: '', empty: '' })
  })
})
