import { sql, type Expression, type RawBuilder } from 'kysely'

// What reads as a number in a row's text, one definition for every comparison that reads numbers:
// a catalog filter's (`price > 10`) and a rule's condition (`greater_than`) and round. Found by a
// differential run: the filter read "1e3" as a number and not " 50" after a no-break space, the
// rules the other way round, so a product could pass a channel's filter and escape its rule.
//
// A number is decimal digits with an optional sign, point and exponent (at most three digits, so
// that the numeric cast never overflows: 1e999999 would raise), at most NUMBER_CHARS characters,
// with blanks around it. Blanks are Unicode's White_Space characters (NBSP, the ideographic space …),
// the same whatever the database's locale: its [[:space:]] may hold more of them or fewer (a C
// locale: ASCII only). The cast trims them first: numeric input trims ASCII whitespace only.

const WHITE_SPACE_CODES = [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005].concat([
  0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
])

/** The blanks as \u escapes, for a regular expression's bracket expression or an E'' string. */
export const WHITE_SPACE = WHITE_SPACE_CODES.map((code) => `\\u${code.toString(16).padStart(4, '0')}`).join('')
/** SQL: the blanks as btrim's characters. */
export const BLANKS = `E'${WHITE_SPACE}'`
/** A pattern's bracket expression of one blank (the regular expression reads the \u escapes). */
export const BLANK = `[${WHITE_SPACE}]`

/** The longest text read as a number: Postgres' numeric holds at most 16,383 digits after the point. */
export const NUMBER_CHARS = 1000
const DIGITS = '[-+]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][-+]?0*[0-9]{1,3})?'
/** The pattern of a number's text, for Postgres' `~` (no backslash but the \u escapes its engine reads). */
export const NUMBER_PATTERN = `^${BLANK}*${DIGITS}${BLANK}*$`

/** SQL text: whether the text `v` reads as a number. */
export function isNumberSql(v: string): string {
  return `(char_length(${v}) <= ${NUMBER_CHARS} AND ${v} ~ '${NUMBER_PATTERN}')`
}

/** SQL text: the numeric of the text `v`, which isNumberSql found a number. */
export function numericSql(v: string): string {
  return `btrim(${v}, ${BLANKS})::numeric`
}

/**
 * The same two over a query builder's text expression: its numeric, NULL where it reads as no
 * number. The pattern goes as a parameter, which means the same whatever standard_conforming_strings says.
 */
export function numericOrNull(value: Expression<string>): RawBuilder<unknown> {
  const isNumber = sql`char_length(${value}) <= ${sql.lit(NUMBER_CHARS)} AND (${value}) ~ ${NUMBER_PATTERN}`
  return sql`(CASE WHEN ${isNumber} THEN btrim(${value}, ${sql.raw(BLANKS)})::numeric END)`
}

const NUMBER_REGEXP = new RegExp(`^[${String.fromCodePoint(...WHITE_SPACE_CODES)}]*${DIGITS}[${String.fromCodePoint(...WHITE_SPACE_CODES)}]*$`, 'u')

/** Whether a text a client sends (a rule's value) reads as a number, as isNumberSql reads one. */
export function isNumberText(text: string): boolean {
  return [...text].length <= NUMBER_CHARS && NUMBER_REGEXP.test(text)
}
