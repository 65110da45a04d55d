/** What a change did to each field: `[before, after]`, or `'changed'` for a secret whose values are never kept. */
export type Changes = Record<string, [unknown, unknown] | 'changed'>

export interface ChangeOptions {
  /** Fields whose values are secrets: recorded as `'changed'` when they differ, never with their values. */
  secrets?: readonly string[]
  /** Fields left out (bookkeeping a person did not change). `id`, `account_id`, `created_at` and `updated_at` always are. */
  omit?: readonly string[]
}

const BOOKKEEPING = ['id', 'account_id', 'created_at', 'updated_at']

/**
 * The fields that differ between two states of a resource; `before` null for a creation, `after`
 * null for a deletion. Values are compared as JSON (a Date as its ISO text).
 */
export function changesBetween(before: object | null, after: object | null, options: ChangeOptions = {}): Changes {
  const omitted = new Set([...BOOKKEEPING, ...(options.omit ?? [])])
  const secrets = new Set(options.secrets ?? [])
  const old = (before ?? {}) as Record<string, unknown>
  const now = (after ?? {}) as Record<string, unknown>
  const changes: Changes = {}
  for (const field of new Set([...Object.keys(old), ...Object.keys(now)])) {
    if (omitted.has(field)) continue
    const was = jsonValue(old[field])
    const is = jsonValue(now[field])
    if (JSON.stringify(was) === JSON.stringify(is)) continue
    changes[field] = secrets.has(field) ? 'changed' : [was, is]
  }
  return changes
}

function jsonValue(value: unknown): unknown {
  if (value === undefined) return null
  if (value instanceof Date) return value.toISOString()
  return JSON.parse(JSON.stringify(value)) as unknown
}

/**
 * What the log keeps of a URL that may carry its receiver's token in its path or query (a webhook's,
 * an http destination's): its origin. The whole URL is compared and shown as `changed` only.
 */
export function urlOrigin(url: string): string {
  try {
    return new URL(url).origin
  } catch {
    return '(not a URL)'
  }
}
