// Postgres SQLSTATE codes that a service turns into client errors.
export function sqlState(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined
}

export function isUniqueViolation(error: unknown): boolean {
  return sqlState(error) === '23505'
}

// deadlock_detected, serialization_failure: Postgres ended the transaction so that another could go on.
const CONFLICTS = new Set(['40P01', '40001'])

/**
 * `work` (a transaction of its own), tried again when Postgres ended it for a deadlock or a
 * serialisation failure with another transaction, at most `attempts` times in all.
 */
export async function retryingConflicts<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work()
    } catch (error) {
      if (attempt < attempts && CONFLICTS.has(sqlState(error) ?? '')) continue
      throw error
    }
  }
}
