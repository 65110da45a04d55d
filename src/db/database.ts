import { Kysely, PostgresDialect, type Transaction } from 'kysely'
import pg from 'pg'
import type { Database } from './schema.js'

export type Db = Kysely<Database>
/** A handle that may or may not be inside a transaction: data access accepts either. */
export type DbHandle = Kysely<Database> | Transaction<Database>

export function createDb(connectionString: string, poolSize = 10): Db {
  const pool = new pg.Pool({ connectionString, max: poolSize })
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', () => {})
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
}
