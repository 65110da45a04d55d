// Ids arrive in paths and bodies as strings or numbers; anything that is not a positive integer
// cannot name a row, so it is treated as "not found" (paths) or rejected (bodies) by the callers.
const MAX_ID = 9223372036854775807n // ids are Postgres bigints

export function isId(value: string): boolean {
  return /^[1-9]\d{0,18}$/.test(value) && BigInt(value) <= MAX_ID
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Batch ids and process ids are UUIDs: anything else names no row (and must not reach a uuid column). */
export function isUuid(value: string): boolean {
  return UUID.test(value)
}

export function bodyId(value: string | number | null | undefined): string | undefined {
  if (value === null || value === undefined || value === '') return undefined
  return String(value)
}
