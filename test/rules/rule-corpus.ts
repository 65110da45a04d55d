import { expect } from 'vitest'
import type { ImportFixture } from '../helpers/factories.js'
import { preview, type Row } from './rule-fixture.js'

// One catalog for the rule semantics tests (rule-actions*, rule-conditions*): about forty products
// whose values meet every action and operator with what shops send: empty and missing values, blanks
// (NBSP, tabs), case, German, French, emoji and CJK text, numbers that are and are not numbers,
// HTML. Each product's id says what it is there for.

const NBSP = '\u00a0'

export const CORPUS: Row[] = [
  {
    id: 'full',
    title: 'Shirt',
    brand: 'Acme',
    color: 'red',
    size: 'XL',
    price: '19.999',
    availability: 'In Stock',
    category: 'Home > Kitchen > Knives',
    description: '<p>Fish &amp; Chips</p>',
    material: 'Colour colour COLOUR',
    gtin: '4006381333931',
  },
  {
    id: 'empty',
    title: 'Hat',
    brand: 'Bolt',
    color: '',
    size: '',
    price: '  19.5 ',
    availability: 'out of stock',
    category: 'Toys',
    description: 'plain text',
    material: 'Straße Maß',
  },
  {
    id: 'missing',
    title: '',
    brand: 'Müller',
    size: 'M',
    price: '19,99',
    availability: 'VORRÄTIG',
    category: '',
    description: '&lt;b&gt;bold&lt;/b&gt;',
    material: 'a.*b A.*B',
  },
  {
    id: 'blank',
    title: 'ÄPFEL & Straße',
    brand: '  ',
    color: NBSP,
    size: ' \t ',
    price: '-2.345',
    availability: 'in stock ',
    category: 'Garden >  > Tools',
    description: '&#228;&#xE9; &amp;lt; &#0;',
    material: 'Länge 30cm, Breite 20 CM',
  },
  {
    id: 'accents',
    title: 'hello wORLD élan',
    brand: 'Émile',
    color: 'Blue',
    price: 'n/a',
    availability: 'preorder',
    category: 'A>B',
    description: 'Größe: <b>M</b>',
    material: 'ÄÄ ää',
  },
  {
    id: 'emoji',
    title: '😀😀😀 😀😀😀',
    brand: '🚀 Rocket',
    color: '绿色',
    price: '123456789012345678901234567890.125',
    availability: '',
    category: '🍎 > 🍏 > 🍐',
    description: `&nbsp;x&nbsp;`,
    material: '🍎 and 🍏',
  },
  {
    id: 'cjk',
    title: '日本語のテキストです',
    brand: '無印良品',
    color: '白',
    price: '+5',
    availability: 'IN STOCK',
    category: '服 > 靴',
    material: `  Hello \t  World${NBSP} `,
  },
  { id: 'long', title: 'The quick brown fox jumps', brand: 'Zed', price: '.5', size: 'S' },
  { id: 'word', title: 'Supercalifragilistic', price: '5.', color: 'GREEN' },
  { id: 'tabbed', title: 'Tab\tbed  title', price: '\t7.25\n', color: ' \t\n ' },
  { id: 'num-exp', price: '1e5', title: 'Exponent' },
  { id: 'num-dash', price: '-', title: 'Dash' },
  { id: 'num-dot', price: '.', title: 'Dot' },
  { id: 'num-signs', price: '+-1', title: 'Signs' },
  { id: 'num-half', price: '2.5', title: 'Half' },
  { id: 'num-neg-half', price: '-2.5', title: 'Negative half' },
  { id: 'num-tiny', price: '-0.001', title: 'Tiny' },
  { id: 'num-up', price: '19.001', title: 'Up' },
  { id: 'num-zero', price: '0', title: 'Zero' },
  { id: 'num-big', price: '12345678901234567890', title: 'Big' },
  { id: 'num-nbsp', price: `19.5${NBSP}`, title: 'Nbsp' },
  { id: 'num-spaced', price: '1 000', title: 'Spaced' },
  { id: 'num-euro', price: '12.50 EUR', title: 'Euro' },
  { id: 'html-nested', description: '<div class="x"><p>One</p> <p>Two &amp; three</p></div>', title: 'Nested' },
  { id: 'html-text', description: '2 < 3 and 5 > 4', title: 'Comparison' },
  { id: 'html-entities', description: '&quot;Caf&eacute;&quot; &euro;5 &#8364;6 &#x1F600;', title: 'Entities' },
  { id: 'split-end', category: 'Shoes > Boots > ', title: 'Trailing separator' },
  { id: 'split-many', category: 'a > b > c > d > e', title: 'Many parts' },
  { id: 'map-exact', availability: 'in stock', title: 'Exact map' },
  { id: 'map-other', availability: 'backorder', title: 'Other map' },
  { id: 'regex-many', material: 'cm cm CM cM', title: 'Regex many' },
  { id: 'sentence', title: '  lower start', description: 'émile zola' },
  { id: 'only-id' },
  { id: 'quote', title: 'Say "hi" \\ bye', brand: "O'Neil" },
  { id: 'apos', title: "o'neil mcdonald-smith 3d", brand: 'ACME' },
  { id: 'equal-len', title: '12345', color: 'Red' },
  { id: 'ws-nbsp', title: `${NBSP}${NBSP}`, color: 'Ä' },
  { id: 'ws-tabs', title: '\t\n', color: 'ä' },
  { id: 'ws-ideo', title: '\u3000\u2003', color: '\u3000', price: '\u30007\u3000' },
  // More digits after the point than Postgres' numeric holds: no number.
  { id: 'num-long', price: `0.${'1'.repeat(20_000)}`, title: 'Long number' },
  { id: 'x-values', title: 'xxxxxxxx', material: 'abcabc' },
  { id: 'brand-only', brand: 'Solo' },
]

export const ALL_IDS = CORPUS.map((row) => row.id as string)

/**
 * What a draft of rules leaves in `attribute` of each product `want` names, by a site preview (which
 * saves nothing): the value ('' for none) or null where the rules exclude the product.
 */
export async function afterValues(
  f: ImportFixture,
  rules: Record<string, unknown>[],
  attribute: string,
  ids: string[],
): Promise<Record<string, string | null>> {
  const found = await preview(f, { rules, ids, summary: false })
  expect(
    found.products.map((product) => product.id),
    'the products asked, in order',
  ).toEqual(ids)
  return Object.fromEntries(found.products.map((product) => [product.id, product.excluded ? null : (product.after?.[attribute] ?? '')]))
}

/** Asserts that one rule writing `attribute` with `then` leaves each product of `want` with its value. */
export async function expectAfter(f: ImportFixture, rule: Record<string, unknown>, want: Record<string, string | null>): Promise<void> {
  const attribute = rule.attribute as string
  expect(await afterValues(f, [rule], attribute, Object.keys(want)), JSON.stringify(rule)).toEqual(want)
}

/** Asserts for which products of `want` the condition (or group) holds, by the step of a draft rule that uses it. */
export async function expectMatches(f: ImportFixture, condition: Record<string, unknown>, want: Record<string, boolean>): Promise<void> {
  const group = 'all' in condition || 'any' in condition ? condition : { all: [condition] }
  const ids = Object.keys(want)
  const found = await preview(f, { rules: [{ attribute: 'hit', if: group, then: [{ action: 'set', value: 'yes' }] }], ids, summary: false })
  expect(
    found.products.map((product) => product.id),
    'the products asked, in order',
  ).toEqual(ids)
  const matched = Object.fromEntries(found.products.map((product) => [product.id, product.steps[0]?.matched]))
  expect(matched, JSON.stringify(group)).toEqual(want)
  // What a match does: the then actions ran where it held, and only there.
  for (const product of found.products) expect(product.after?.hit ?? '', product.id).toBe(want[product.id] ? 'yes' : '')
}

/** A condition of `attribute`, as a rule's `if` names one. */
export const on = (attribute: string, operator: string, more: Record<string, unknown> = {}) => ({ attribute, operator, ...more })
