import { sql } from 'kysely'
import { databaseAnswers, poolUsage, type Db, type PoolUsage } from './database.js'

export interface DatabaseHealth {
  /** ok; saturated: every pooled connection busy and requests waiting for one; unavailable: the database does not answer. */
  status: 'ok' | 'saturated' | 'unavailable'
  database: 'up' | 'down'
  pool?: PoolUsage
  /** Why the database was found down, for the log. */
  error?: unknown
}

/**
 * Whether this process's database can take work. A saturated pool is answered without a pooled query:
 * it would queue behind the others, and what a balancer needs to know is that this process cannot take
 * more now. Whether the database is up then, a connection of its own tells (busy connections may be ones
 * still trying to connect), waiting at most `probeTimeoutMs`.
 */
export async function checkDatabaseHealth(db: Db, probeTimeoutMs: number): Promise<DatabaseHealth> {
  const pool = poolUsage(db)
  const withPool = pool ? { pool } : {}
  if (pool && pool.waiting > 0 && pool.busy >= pool.size) {
    if (await databaseAnswers(db, probeTimeoutMs)) return { status: 'saturated', database: 'up', ...withPool }
    return { status: 'unavailable', database: 'down', ...withPool }
  }
  try {
    await sql`SELECT 1`.execute(db)
    return { status: 'ok', database: 'up', ...withPool }
  } catch (error) {
    return { status: 'unavailable', database: 'down', ...withPool, error }
  }
}
