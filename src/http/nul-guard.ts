import { BadRequestError } from '../errors.js'

// Postgres text cannot hold NUL (U+0000): a value with one fails inside the database, as a 500 after
// work was done. Each interface refuses it at its door instead, naming where it was.

// Half of a surrogate pair without its other half: no UTF-8 can encode it, and Postgres would store
// U+FFFD in its place without a word.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** The path of the first text or key in a JSON value with a NUL, or undefined. */
export function findNul(value: unknown): string | undefined {
  return findText(value, (text) => text.includes('\0'))
}

/** The path of the first text or key in a JSON value with a lone surrogate, or undefined. */
export function findLoneSurrogate(value: unknown): string | undefined {
  return findText(value, (text) => LONE_SURROGATE.test(text))
}

/**
 * The path (`mapping[2].name`, `` for the value itself) of the first text or key in a JSON value
 * that `refused` refuses. Walks with a stack of its own: a body may nest deeper than the call stack goes.
 */
function findText(value: unknown, refused: (text: string) => boolean): string | undefined {
  const pending: { value: unknown; path: string }[] = [{ value, path: '' }]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, path } = next
    if (typeof value === 'string') {
      if (refused(value)) return printable(path)
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) pending.push({ value: value[index], path: `${path}[${index}]` })
    } else if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value)
      for (let index = entries.length - 1; index >= 0; index--) {
        const [key, member] = entries[index]!
        const memberPath = path === '' ? key : `${path}.${key}`
        if (refused(key)) return printable(memberPath)
        pending.push({ value: member, path: memberPath })
      }
    }
  }
  return undefined
}

/** Refuses path or query parameters with a NUL in a name or value; `what` says which they are. */
export function refuseNulParameters(parameters: unknown, what: 'path parameter' | 'query parameter'): void {
  const field = findNul(parameters)
  if (field === undefined) return
  const name = field.replace(/\[\d+\]$/, '')
  throw new BadRequestError(`${name}: the ${what} must not contain NUL (\\u0000)`)
}

// A path quoted in a message: a NUL in a key is spelled out, not sent raw.
function printable(path: string): string {
  return path.replace(/\0/g, '\\u0000')
}
