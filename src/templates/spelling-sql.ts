import type { SqlQuoter } from '../feeds/sql-quoter.js'
import { ISO_4217_CODES } from './iso-4217.js'
import type { ValueRule } from './template-types.js'

// The SQL of a value in the channel's spelling (template-types.ts says which spellings each rule
// accepts): the value as the file writes it, NULL when it is no spelling of a valid value. Each
// starts with a cheap test of the value as the channel writes it (most values of most catalogs),
// and reads it another way only when that fails. The export computes it once per row, a level below
// the checks (template-checks.ts), which compare it with the value, and the line, which writes it.

/** The rules whose values have other spellings the export rewrites. */
export type RewritingRule = Extract<ValueRule, { kind: 'one_of' | 'category' | 'price' | 'amount' }>

export function isRewriting(rule: ValueRule): rule is RewritingRule {
  return rule.kind === 'one_of' || rule.kind === 'category' || rule.kind === 'price' || rule.kind === 'amount'
}

// A price's currency is looked up in a list of the codes, which Postgres hashes: a fifth of the time
// of a search in one text of them, and a regular expression of them as alternatives costs tens of
// microseconds a value (measured).
// Blanks a shop's export leaves around a value: spaces, tabs, line ends, no-break spaces.
const BLANKS = `E' \\t\\n\\r\\u00a0'`
// A price's amount with its currency before or after it, or none; `€` and `£` stand for EUR and GBP.
// Blanks include the no-break space German currency formats put before `€` (`\s` does not).
const PRICE_PARTS = String.raw`^[\s\u00a0]*([A-Za-z]{3}|€|£)?[\s\u00a0]*(-?[0-9]+(?:\.[0-9]+|,[0-9]{1,2})?)[\s\u00a0]*([A-Za-z]{3}|€|£)?[\s\u00a0]*$`
const CATEGORY_PATH = String.raw`^([0-9]+|[^0-9\s>]([^>]*[^\s>])?( > [^\s>]([^>]*[^\s>])?)*)$`

/** SQL: the folded form a listed value is recognised by: lower case, blanks around it trimmed, `_` as a space. */
export function foldedSql(v: string): string {
  return `translate(lower(btrim(${v}, ${BLANKS})), '_', ' ')`
}

/** The folded spellings of a one_of rule, each with the value it stands for. */
export function spellingsOf(rule: Extract<ValueRule, { kind: 'one_of' }>): Map<string, string> {
  const fold = (text: string) => text.trim().toLowerCase().replaceAll('_', ' ')
  const spellings = new Map<string, string>()
  const add = (spelling: string, value: string) => {
    const key = fold(spelling)
    const known = spellings.get(key)
    if (known !== undefined && known !== value) throw new Error(`the spelling ${spelling} stands for both ${known} and ${value}`)
    spellings.set(key, value)
  }
  for (const value of rule.values) add(value, value)
  for (const [alias, value] of Object.entries(rule.aliases ?? {})) {
    if (!rule.values.includes(value)) throw new Error(`the alias ${alias} stands for ${value}, which is not a listed value`)
    add(alias, value)
  }
  return spellings
}

/** The spellings of a one_of rule looked up as written: its values, each folded spelling with `_` or a space. */
function literalSpellings(rule: Extract<ValueRule, { kind: 'one_of' }>): Map<string, string> {
  const literal = new Map(rule.values.map((value) => [value, value]))
  for (const [folded, value] of spellingsOf(rule)) {
    for (const spelling of [folded, folded.replaceAll(' ', '_')]) if (!literal.has(spelling)) literal.set(spelling, value)
  }
  return literal
}

export interface Spelling {
  /** SQL: `v` as the file writes it, or NULL when it is no spelling of a valid value. */
  canonical(v: string): string
}

/**
 * The spelling of a rewriting rule. `currency`: the channel's (a price's bare amount takes it; an
 * amount may carry it); null when the channel has none.
 */
export function spellingOf(q: SqlQuoter, rule: RewritingRule, currency: string | null): Spelling {
  switch (rule.kind) {
    case 'one_of': {
      const cases = [...spellingsOf(rule)].map(([key, value]) => `WHEN ${q.escapeLiteral(key)} THEN ${q.escapeLiteral(value)}`).join(' ')
      const one = (v: string) => `CASE ${foldedSql(v)} ${cases} END`
      const other = (v: string) => (rule.list ? listSql(v, one, rule.list.max) : one(v))
      // The spellings as shops write them most (in lower case, `_` or a space, an alias) are looked up
      // as they are, before the value is folded: folding every row cost twice the lookup (measured).
      const written = [...literalSpellings(rule)].map(([spelling, value]) => `WHEN ${q.escapeLiteral(spelling)} THEN ${q.escapeLiteral(value)}`)
      return { canonical: (v) => `CASE ${v} ${written.join(' ')} ELSE ${other(v)} END` }
    }
    case 'category': {
      const spaced = (v: string) => String.raw`regexp_replace(btrim(${v}, ${BLANKS}), '\s*>\s*', ' > ', 'g')`
      const path = q.escapeLiteral(CATEGORY_PATH)
      const other = (v: string) => `(SELECT CASE WHEN c ~ ${path} THEN c END FROM (SELECT ${spaced(v)} AS c) AS x)`
      return { canonical: (v) => `CASE WHEN ${v} ~ ${path} THEN ${v} ELSE ${other(v)} END` }
    }
    case 'price': {
      // A price as the channel writes it ("12.50 EUR", or bare "12.50"), or read another way; then completed.
      const written = (p: string) => writtenPriceSql(q, p, currency)
      const other = (v: string) => `(SELECT ${written('x.p')} FROM (SELECT ${pricePartsSql(q, v, null)} AS p) AS x)`
      return { canonical: (v) => `CASE WHEN ${priceShapeSql(v)} THEN ${written(v)} ELSE ${other(v)} END` }
    }
    case 'amount': {
      const other = (v: string) => pricePartsSql(q, v, currency ?? '')
      if (currency !== null && THREE_DECIMAL_CURRENCIES.includes(currency)) {
        return { canonical: (v) => `CASE WHEN ${amountShapeSql(v)} THEN ${v} ELSE ${other(v)} END` }
      }
      // The amount as written (most rows) is tested as it is; another spelling once it is read.
      const unambiguous = (a: string) => `CASE WHEN ${unambiguousSql(q, a)} THEN ${a} END`
      return {
        canonical: (v) => `CASE WHEN ${amountShapeSql(v)} THEN ${unambiguous(v)} ELSE (SELECT ${unambiguous('a')} FROM (SELECT ${other(v)} AS a) AS x) END`,
      }
    }
  }
}

// `1.299` is 1,299 in German and 1.299 in English: an amount of at most three digits, a dot and
// exactly three more is no price but in the currencies with three decimals (a German shop's
// `1.299 €` went out as 1.299 EUR, a thousandth of its price).
// Matched on the amount alone or on "<amount> <CODE>".
const AMBIGUOUS_AMOUNT = String.raw`^[0-9]{1,3}\.[0-9]{3}( |$)`
const THREE_DECIMAL_CURRENCIES = ['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND']

/** SQL: the amount `a` (or "<amount> <CODE>") cannot hold a thousands separator (AMBIGUOUS_AMOUNT). */
function unambiguousSql(q: SqlQuoter, a: string): string {
  return `${a} !~ ${q.escapeLiteral(AMBIGUOUS_AMOUNT)}`
}

/**
 * SQL: the price `p` ("12.50 EUR" or a bare "12.50") as the file writes it: with a currency of ISO
 * 4217, or bare and completed by the channel's currency with two decimals when that changes no
 * amount (only zeros after the second decimal: `34.000000` as Magento stores prices); else NULL,
 * as for an amount that may hold a thousands separator (AMBIGUOUS_AMOUNT).
 */
function writtenPriceSql(q: SqlQuoter, p: string, currency: string | null): string {
  const clear = unambiguousSql(q, p)
  const threeDecimals = THREE_DECIMAL_CURRENCIES.map((code) => q.escapeLiteral(code)).join(', ')
  const coded =
    `CASE WHEN split_part(${p}, ' ', 2) IN (${ISO_4217_CODES.map((code) => q.escapeLiteral(code)).join(', ')}) ` +
    `AND (${clear} OR split_part(${p}, ' ', 2) IN (${threeDecimals})) THEN ${p} END`
  // Two decimals by text: a third of the time of a numeric cast and round (measured).
  const point = `strpos(${p}, '.')`
  const cents =
    `CASE WHEN ${point} = 0 THEN ${p} || '.00' WHEN octet_length(${p}) - ${point} = 1 THEN ${p} || '0' ` +
    `WHEN octet_length(${p}) - ${point} = 2 THEN ${p} WHEN translate(substr(${p}, ${point} + 3), '0', '') = '' THEN left(${p}, ${point} + 2) END`
  const completed = `(${cents}) || ${q.escapeLiteral(` ${currency}`)}`
  const bare = currency === null ? 'NULL' : THREE_DECIMAL_CURRENCIES.includes(currency) ? completed : `CASE WHEN ${clear} THEN ${completed} END`
  return `CASE WHEN strpos(${p}, ' ') > 0 THEN ${coded} ELSE ${bare} END`
}

/** SQL: a list of up to `max` values separated by commas, each in its canonical form, joined by ", "; NULL when one is none. */
function listSql(v: string, one: (part: string) => string, max: number): string {
  return `(SELECT CASE WHEN count(*) BETWEEN 1 AND ${max} AND count(*) = count(c) THEN string_agg(c, ', ' ORDER BY n) END
    FROM (SELECT ${one('p')} AS c, n FROM unnest(string_to_array(${v}, ',')) WITH ORDINALITY AS u(p, n) WHERE btrim(p, ${BLANKS}) <> '') AS x)`
}

/**
 * SQL: a price written another way, as `<amount> <CODE>` (or the bare amount), or NULL. With
 * `amountIn` (an amount in that currency, '' for none known), the bare amount when the value's
 * currency, if any, is that one, else NULL.
 */
function pricePartsSql(q: SqlQuoter, v: string, amountIn: string | null): string {
  const code = `CASE coalesce(m[1], m[3]) WHEN '€' THEN 'EUR' WHEN '£' THEN 'GBP' ELSE upper(coalesce(m[1], m[3])) END`
  const amount = `replace(m[2], ',', '.')`
  const written = amountIn === null ? `${amount} || coalesce(' ' || ${code}, '')` : amount
  // A price is never negative; an amount's bounds are its rule's to check.
  const allowed = amountIn === null ? `left(m[2], 1) <> '-'` : `coalesce(${code} = ${q.escapeLiteral(amountIn)}, true)`
  return `(SELECT CASE WHEN m IS NOT NULL AND (m[1] IS NULL OR m[3] IS NULL) AND ${allowed} THEN ${written} END
    FROM regexp_match(${v}, ${q.escapeLiteral(PRICE_PARTS)}) AS m)`
}

/**
 * SQL: the price `v` is "12.50 EUR" or "12.50" (then its amount and currency are its parts around
 * the space). One regular expression: on values this short it costs less than the text functions
 * that say the same (measured: 0.3 against 0.7 µs).
 */
export function priceShapeSql(v: string): string {
  return `${v} ~ '^[0-9]+(\\.[0-9]+)?( [A-Z]{3})?$'`
}

/** SQL: `v` is a bare decimal number, optionally negative. */
function amountShapeSql(v: string): string {
  return `${v} ~ '^-?[0-9]+(\\.[0-9]+)?$'`
}
