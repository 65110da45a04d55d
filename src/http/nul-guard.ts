import { BadRequestError } from '../errors.js'

// Postgres text cannot hold NUL (U+0000): a value with one fails inside the database, as a 500 after
// work was done. Each interface refuses it at its door instead, naming where it was.

/**
 * The path (`mapping[2].name`, `` for the value itself) of the first text or key in a JSON value
 * that contains NUL, or undefined. Walks with a stack of its own: a body may nest deeper than the
 * call stack goes.
 */
export function findNul(value: unknown): string | undefined {
  const pending: { value: unknown; path: string }[] = [{ value, path: '' }]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, path } = next
    if (typeof value === 'string') {
      if (value.includes('\0')) return printable(path)
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) pending.push({ value: value[index], path: `${path}[${index}]` })
    } else if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value)
      for (let index = entries.length - 1; index >= 0; index--) {
        const [key, member] = entries[index]!
        const memberPath = path === '' ? key : `${path}.${key}`
        if (key.includes('\0')) return printable(memberPath)
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
