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

// Client text quoted back in an error message: enough to recognise it, never the whole of a huge value.
const EXCERPT_CHARS = 100

/** The text, or its first EXCERPT_CHARS characters and an ellipsis, for quoting in a message. */
export function excerpt(text: string, max = EXCERPT_CHARS): string {
  if (text.length <= max) return text
  // Not cutting a surrogate pair in half.
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max
  return `${text.slice(0, end)}…`
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

/** NUL or an unpaired surrogate: Postgres stores neither in text or jsonb. */
export function hasUnstorableCharacter(value: string): boolean {
  return value.includes('\0') || /\p{Cs}/u.test(value)
}
