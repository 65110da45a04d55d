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

// Right-to-left letters and the bidi controls (embeddings, overrides, isolates, marks).
const REORDERS = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]|\ud802|\ud803|\ud83a|\ud83b/

/** Whether a text could reorder the words around it when shown (a right-to-left letter, a bidi control). */
export function reordersAround(text: string): boolean {
  return REORDERS.test(text)
}

/**
 * A tenant's name quoted in the platform's own sentence (a run's message, a site error): between
 * the Unicode isolates FSI and PDI when it could reorder the sentence's words after it (an unclosed
 * U+202E in a stream's name), as it is otherwise.
 */
export function isolatedName(name: string): string {
  if (!reordersAround(name)) return name
  // Its own embeddings, overrides and isolates go: an isolate closer (U+2069) in the name would end the isolate early.
  return `\u2068${name.replace(/[\u202a-\u202e\u2066-\u2069]/g, '')}\u2069`
}

/** `count` with its noun in a message: "1 product", "3 products", "2 batches" (with `plural` given). */
export function counted(count: number, noun: string, plural = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : plural}`
}
