// What the template corpora are built from: products as shops export them, each with the source of
// its spellings and what the channel's specification makes of it, stated by the product itself.

/** A value as a client sends it to the stream interface (a JSON scalar). */
export type Value = string | number | boolean | null
export type SourceRow = Record<string, Value>

/** What the specification makes of a product on a channel in validation mode exclude. */
export interface Expectation {
  /** False when one of its codes is an error: it is left out and listed in the skipped file. */
  exported: boolean
  /** Every code its diagnostics list, errors, warnings and infos alike. */
  codes: string[]
  /** The value the feed carries for each attribute written another way than sent (its canonical spelling). */
  feed: Record<string, string>
}

export interface CorpusProduct {
  id: string
  /** Who writes values this way: the shop system, plugin, integration or person, and how. */
  source: string
  row: SourceRow
  expect: Expectation
}

/**
 * The stream interface's rule (docs/interface.md, product row rules 3): all values are stored as
 * text, boolean true becomes `1`, boolean false and null an empty string, a number its JSON text.
 */
export function stored(value: Value | undefined): string {
  if (value === true) return '1'
  if (value === false || value === null || value === undefined) return ''
  return typeof value === 'number' ? JSON.stringify(value) : value
}

/** Part of a product: some of its values, the codes they cost and the feed's spelling of them. */
export interface Part {
  row: SourceRow
  codes?: string[]
  feed?: Record<string, string>
}

/** A value the file carries as sent. */
export const as = (attribute: string, value: Value): Part => ({ row: { [attribute]: value } })

/** A value the file carries rewritten as `canonical`, an info `<attribute>_<kind>` (normalised, currency_added, currency_removed). */
export const rewritten = (attribute: string, value: Value, canonical: string, kind = 'normalised'): Part => ({
  row: { [attribute]: value },
  codes: [`${attribute}_${kind}`],
  feed: { [attribute]: canonical },
})

/** A value that fails a rule (or an empty required one): the code it costs, the file carrying it as sent where exported. */
export const failing = (attribute: string, value: Value, ...codes: string[]): Part => ({ row: { [attribute]: value }, codes })

/** Values the file carries as sent, one part each (a later part may replace any of them). */
export const plain = (row: SourceRow): Part[] => Object.entries(row).map(([attribute, value]) => as(attribute, value))

/** A code of the product as a whole (a group rule: no one value fails it). */
export const group = (...codes: string[]): Part => ({ row: {}, codes })

/**
 * Parts merged left to right: a later part that sets every value of an earlier one replaces it,
 * with its codes and feed spelling (a later part may not set only some of an earlier one's values).
 */
export function merge(...parts: Part[]): Required<Part> {
  const kept: Part[] = []
  for (const part of parts) {
    const names = Object.keys(part.row)
    for (let i = kept.length - 1; i >= 0; i--) {
      const earlier = Object.keys(kept[i]?.row ?? {})
      const overlap = earlier.filter((name) => names.includes(name))
      if (overlap.length === 0) continue
      if (overlap.length !== earlier.length) throw new Error(`a part sets ${overlap.join(', ')} of an earlier part of ${earlier.join(', ')}`)
      kept.splice(i, 1)
    }
    kept.push(part)
  }
  return {
    row: Object.assign({}, ...kept.map((p) => p.row)) as SourceRow,
    codes: [...new Set(kept.flatMap((p) => p.codes ?? []))],
    feed: Object.assign({}, ...kept.map((p) => p.feed ?? {})) as Record<string, string>,
  }
}

/**
 * A product from its parts, exported unless `leftOut` (the specification rejects it: one of its
 * codes is an error). The corpus test holds `leftOut` to the codes' severities in the template.
 */
export function product(id: string, source: string, parts: Part[], leftOut = false): CorpusProduct {
  const { row, codes, feed } = merge(...parts)
  return { id, source, row: { id, ...row }, expect: { exported: !leftOut, codes, feed } }
}

/** A seeded pseudo-random sequence (mulberry32): the corpus is the same on every run. */
export function seeded(seed: number): { next(): number; pick<T>(items: readonly T[]): T; int(min: number, max: number): number } {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1))
  return { next, int, pick: (items) => items[int(0, items.length - 1)] as (typeof items)[number] }
}

/** The GS1 check digit of `payload`: weights 3, 1, 3, … from its rightmost digit. */
export function checkDigit(payload: string): string {
  const sum = [...payload].reverse().reduce((total, digit, i) => total + Number(digit) * (i % 2 === 0 ? 3 : 1), 0)
  return String((10 - (sum % 10)) % 10)
}

/** A valid GTIN-13 with the German GS1 prefix 400 (as German brands' EANs start), numbered `n`. */
export const ean13 = (n: number) => withCheckDigit(`400${String(4_000_000 + n).padStart(9, '0')}`)
/** A valid UPC-A (GTIN-12), numbered `n`; its first digit is 0, which a spreadsheet drops. */
export const upc = (n: number) => withCheckDigit(`0${String(36_000_000_00 + n).padStart(10, '0')}`)
export const withCheckDigit = (payload: string) => payload + checkDigit(payload)
/** The same GTIN with a wrong check digit (a digit mistyped or the check digit cut). */
export const wrongCheckDigit = (gtin: string) => gtin.slice(0, -1) + String((Number(gtin.slice(-1)) + 1) % 10)

export const slug = (text: string) =>
  text
    .toLowerCase()
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')

/** Amounts shops really price at: x.99, x.95, x.90, x.00. */
export function shopPrice(r: ReturnType<typeof seeded>, min = 5, max = 180): number {
  // In cents first: a sum of floats such as 33 + 0.99 need not print as 33.99.
  return (r.int(min, max) * 100 + r.pick([99, 95, 90, 0, 49])) / 100
}
export const fixed = (amount: number) => amount.toFixed(2)
/** `amount` less `by`, counted in cents (a float difference need not print as the amount it is). */
export const less = (amount: number, by: number) => (Math.round(amount * 100) - Math.round(by * 100)) / 100
export const comma = (amount: number) => amount.toFixed(2).replace('.', ',')
