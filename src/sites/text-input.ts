import { BadRequestError } from '../errors.js'

// Names, titles, keys and other short texts a client stores: bounded so that listings, indexes and
// copies stay small (a 10,000-character tag key passes Postgres' index row size and fails with a
// 500), and free of NUL, which a Postgres text column cannot hold.
export const MAX_NAME_CHARS = 255

/** Checks a trimmed text; the message names the field and the limit. */
export function checkText(value: string, field: string, max = MAX_NAME_CHARS): string {
  if (value.includes('\0')) throw new BadRequestError(`${field}: must not contain NUL (\\u0000)`)
  if (value.length > max) {
    const length = characters(value)
    if (length > max) throw new BadRequestError(`${field}: at most ${max} characters (this one has ${length})`)
  }
  return value
}

/** Trims a given text and checks it; null and undefined mean "not given". */
export function readText(value: string | null | undefined, field: string, max = MAX_NAME_CHARS): string | undefined {
  if (value === null || value === undefined) return undefined
  return checkText(value.trim(), field, max)
}

// Postgres counts characters as code points, JavaScript's length UTF-16 units: a text within the
// limit in units is within it in code points, so only a longer one is counted (bodies are bounded).
function characters(value: string): number {
  let count = 0
  for (const _ of value) count++
  return count
}
