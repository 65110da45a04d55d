// Postgres SQLSTATE codes that a service turns into client errors.
export function sqlState(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined
}

export function isUniqueViolation(error: unknown): boolean {
  return sqlState(error) === '23505'
}
