import { beforeAll, describe, it } from 'vitest'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { CORPUS, expectMatches, on } from './rule-corpus.js'
import { importedSite } from './rule-fixture.js'

// Every operator of a condition on the shared catalog (rule-corpus.ts), as a draft rule's step shows
// it in a preview: text operators ignore case (umlauts too) unless case_sensitive; empty is missing or
// blanks only (NBSP, ideographic space); number operators are false unless the value is a number.
// rule-groups.test.ts has groups, else and the order of rules.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

let f: ImportFixture
beforeAll(async () => {
  f = await importFixture(t)
  await importedSite(f, CORPUS)
})

describe('equals, not_equals', () => {
  it('equals ignores case unless case_sensitive', async () => {
    await expectMatches(f, on('title', 'equals', { value: 'shirt' }), { full: true, empty: false, 'only-id': false })
    await expectMatches(f, on('title', 'equals', { value: 'shirt', case_sensitive: true }), { full: false })
    await expectMatches(f, on('title', 'equals', { value: 'Shirt', case_sensitive: true }), { full: true, empty: false })
  })

  it('equals folds the case of umlauts', async () => {
    await expectMatches(f, on('title', 'equals', { value: 'äpfel & straße' }), { blank: true })
    await expectMatches(f, on('title', 'equals', { value: 'äpfel & straße', case_sensitive: true }), { blank: false })
    await expectMatches(f, on('color', 'equals', { value: 'ä' }), { 'ws-nbsp': true, 'ws-tabs': true, full: false })
    await expectMatches(f, on('color', 'equals', { value: 'ä', case_sensitive: true }), { 'ws-nbsp': false, 'ws-tabs': true })
  })

  it('equals "" holds for an empty or missing value, not for blanks', async () => {
    await expectMatches(f, on('color', 'equals', { value: '' }), { empty: true, missing: true, blank: false, full: false })
  })

  it('not_equals holds for every other value, missing ones too', async () => {
    await expectMatches(f, on('color', 'not_equals', { value: 'RED' }), { full: false, empty: true, missing: true, word: true })
    await expectMatches(f, on('color', 'not_equals', { value: 'RED', case_sensitive: true }), { full: true })
  })
})

describe('contains, not_contains, starts_with, ends_with', () => {
  it('contains finds text anywhere, ignoring case unless told', async () => {
    await expectMatches(f, on('title', 'contains', { value: 'FOX' }), { long: true, full: false, 'only-id': false })
    await expectMatches(f, on('title', 'contains', { value: 'FOX', case_sensitive: true }), { long: false })
    await expectMatches(f, on('title', 'contains', { value: 'äpfel' }), { blank: true })
    await expectMatches(f, on('title', 'contains', { value: 'ß', case_sensitive: true }), { blank: true, full: false })
    await expectMatches(f, on('title', 'contains', { value: '😀 😀' }), { emoji: true, cjk: false })
    await expectMatches(f, on('title', 'contains', { value: 'テキスト' }), { cjk: true, emoji: false })
  })

  it('not_contains is its opposite, true for a missing value', async () => {
    await expectMatches(f, on('title', 'not_contains', { value: 'FOX' }), { long: false, full: true, 'only-id': true })
    await expectMatches(f, on('title', 'not_contains', { value: 'FOX', case_sensitive: true }), { long: true })
  })

  it('starts_with and ends_with compare the ends, ignoring case unless told', async () => {
    await expectMatches(f, on('title', 'starts_with', { value: 'the Q' }), { long: true, word: false, 'only-id': false })
    await expectMatches(f, on('title', 'starts_with', { value: 'the Q', case_sensitive: true }), { long: false })
    await expectMatches(f, on('title', 'starts_with', { value: 'äp' }), { blank: true })
    await expectMatches(f, on('title', 'starts_with', { value: 'äp', case_sensitive: true }), { blank: false })
    await expectMatches(f, on('title', 'ends_with', { value: 'JUMPS' }), { long: true, full: false, 'only-id': false })
    await expectMatches(f, on('title', 'ends_with', { value: 'JUMPS', case_sensitive: true }), { long: false })
    await expectMatches(f, on('title', 'ends_with', { value: 'STRAßE' }), { blank: true })
    await expectMatches(f, on('title', 'ends_with', { value: 'です' }), { cjk: true })
    await expectMatches(f, on('title', 'ends_with', { value: ' 😀😀😀' }), { emoji: true })
    await expectMatches(f, on('title', 'starts_with', { value: '😀😀😀 ' }), { emoji: true })
  })
})

describe('in, not_in', () => {
  it('in holds for a value of the list, ignoring case unless told', async () => {
    await expectMatches(f, on('title', 'in', { values: ['shirt', 'HAT'] }), { full: true, empty: true, long: false, 'only-id': false })
    await expectMatches(f, on('title', 'in', { values: ['Shirt', 'HAT'], case_sensitive: true }), { full: true, empty: false })
    await expectMatches(f, on('color', 'in', { values: ['ä', 'white'] }), { 'ws-nbsp': true, 'ws-tabs': true, full: false })
    await expectMatches(f, on('color', 'in', { values: ['', 'red'] }), { full: true, missing: true, blank: false })
  })

  it('not_in holds for every value the list does not hold', async () => {
    await expectMatches(f, on('title', 'not_in', { values: ['shirt', 'HAT'] }), { full: false, empty: false, long: true, 'only-id': true })
    await expectMatches(f, on('title', 'not_in', { values: ['Shirt', 'HAT'], case_sensitive: true }), { full: false, empty: true })
  })
})

describe('is_empty, is_not_empty', () => {
  it('empty is missing, empty or only blanks: spaces, tabs, NBSP, the ideographic space', async () => {
    const want = { full: false, empty: true, missing: true, blank: true, tabbed: true, 'ws-ideo': true, cjk: false, 'only-id': true, 'ws-nbsp': false }
    await expectMatches(f, on('color', 'is_empty'), want)
    await expectMatches(f, on('title', 'is_empty'), { 'ws-nbsp': true, 'ws-tabs': true, 'ws-ideo': true, emoji: false, missing: true })
    const opposite = Object.fromEntries(Object.entries(want).map(([id, empty]) => [id, !empty]))
    await expectMatches(f, on('color', 'is_not_empty'), opposite)
  })
})

describe('number operators', () => {
  it('greater_than and greater_or_equal: false where the value is no number', async () => {
    const numbers = { full: true, empty: false, missing: false, accents: false, emoji: true, cjk: false, 'num-nbsp': false, 'num-big': true }
    // 1e5 is a number, as a catalog filter reads one (src/db/number-text.ts).
    const others = { 'num-exp': true, 'num-long': false, 'num-euro': false, 'num-spaced': false, 'only-id': false }
    await expectMatches(f, on('price', 'greater_than', { value: '19.5' }), { ...numbers, ...others })
    await expectMatches(f, on('price', 'greater_or_equal', { value: ' 19.5 ' }), { ...numbers, ...others, empty: true, 'num-nbsp': true })
  })

  it('less_than and less_or_equal: negative values, and an empty value is no zero', async () => {
    const want = { blank: true, 'num-tiny': true, 'num-zero': false, accents: false, 'only-id': false, 'num-dash': false, 'num-dot': false, 'ws-ideo': false }
    await expectMatches(f, on('price', 'less_than', { value: '0' }), want)
    await expectMatches(f, on('price', 'less_or_equal', { value: '-0' }), { ...want, 'num-zero': true })
    await expectMatches(f, on('price', 'less_or_equal', { value: '7' }), { 'ws-ideo': true, tabbed: false, cjk: true })
  })

  it('compares every digit: twenty-digit numbers and many decimals', async () => {
    await expectMatches(f, on('price', 'less_or_equal', { value: '12345678901234567890' }), { 'num-big': true })
    await expectMatches(f, on('price', 'less_than', { value: '12345678901234567891' }), { 'num-big': true })
    await expectMatches(f, on('price', 'greater_than', { value: '12345678901234567890' }), { 'num-big': false })
    await expectMatches(f, on('price', 'greater_than', { value: '123456789012345678901234567890.1249' }), { emoji: true })
    await expectMatches(f, on('price', 'greater_than', { value: '123456789012345678901234567890.1251' }), { emoji: false })
    await expectMatches(f, on('price', 'less_than', { value: '0.1111111111111111111111112' }), { 'num-long': false, 'num-zero': true })
  })
})

describe('matches, length_greater_than', () => {
  it('matches a pattern, ignoring case (umlauts too) unless told', async () => {
    await expectMatches(f, on('title', 'matches', { value: '^s.*T$' }), { full: true, empty: false, 'only-id': false })
    await expectMatches(f, on('title', 'matches', { value: '^s.*T$', case_sensitive: true }), { full: false })
    await expectMatches(f, on('title', 'matches', { value: '^S.*t$', case_sensitive: true }), { full: true })
    await expectMatches(f, on('title', 'matches', { value: 'äpfel' }), { blank: true })
    await expectMatches(f, on('title', 'matches', { value: 'äpfel', case_sensitive: true }), { blank: false })
    await expectMatches(f, on('gtin', 'matches', { value: '^[0-9]{13}$' }), { full: true, missing: false })
    await expectMatches(f, on('title', 'matches', { value: '^😀{3} 😀+$' }), { emoji: true, cjk: false })
  })

  it('length_greater_than counts characters: emoji and CJK count one each', async () => {
    await expectMatches(f, on('title', 'length_greater_than', { value: '20' }), { long: true, word: false, full: false })
    await expectMatches(f, on('title', 'length_greater_than', { value: '6' }), { emoji: true, cjk: true })
    await expectMatches(f, on('title', 'length_greater_than', { value: '7' }), { emoji: false, cjk: true })
    await expectMatches(f, on('title', 'length_greater_than', { value: '10' }), { cjk: false })
    await expectMatches(f, on('title', 'length_greater_than', { value: '0' }), { full: true, missing: false, 'only-id': false })
  })
})
