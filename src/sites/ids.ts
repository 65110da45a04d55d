// Ids arrive in paths and bodies as strings or numbers; anything that is not a positive integer
// cannot name a row, so it is treated as "not found" (paths) or rejected (bodies) by the callers.
const MAX_ID = 9223372036854775807n // ids are Postgres bigints

export function isId(value: string): boolean {
  return /^[1-9]\d{0,18}$/.test(value) && BigInt(value) <= MAX_ID
}

export function bodyId(value: string | number | null | undefined): string | undefined {
  if (value === null || value === undefined || value === '') return undefined
  return String(value)
}
