import { randomBytes } from 'node:crypto'
import { Kysely, PostgresDialect, sql, type CompiledQuery, type Transaction } from 'kysely'
import pg from 'pg'
import type { Database } from './schema.js'

export type Db = Kysely<Database>
/** A handle that may or may not be inside a transaction: data access accepts either. */
export type DbHandle = Kysely<Database> | Transaction<Database>

// COPY needs the pg client itself, which Kysely does not expose: remember each handle's pool.
const pools = new WeakMap<Db, pg.Pool>()

/**
 * Every connection of this process names itself with this, so that a shutdown can find and end the
 * statements this process still runs, and only those (src/db/own-sessions.ts).
 */
export const PROCESS_APPLICATION_NAME = `catalog-platform/${process.pid}/${randomBytes(4).toString('hex')}`

export function createDb(connectionString: string, poolSize = 10): Db {
  const pool = new pg.Pool({ connectionString, max: poolSize, application_name: PROCESS_APPLICATION_NAME })
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', () => {})
  // Nor may a checked-out one: the pool listens only while a client is idle, and Kysely adds no
  // listener, so a dropped connection mid-query would be an unhandled 'error' event. The query in
  // flight fails by itself, and the pool drops the client on release (it is no longer queryable).
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  pools.set(db, pool)
  return db
}

export interface PoolUsage {
  size: number
  busy: number
  /** Requests waiting for a connection. */
  waiting: number
}

/** How busy a handle's pool is, for the health check. */
export function poolUsage(db: Db): PoolUsage | undefined {
  const pool = pools.get(db)
  if (!pool) return undefined
  return { size: pool.options.max, busy: pool.totalCount - pool.idleCount, waiting: pool.waitingCount }
}

/**
 * Runs `work` in a transaction on a dedicated pg client, for statements Kysely cannot express
 * (COPY). Queries are still built with Kysely and run through `run`. Commits when `work` resolves,
 * rolls back when it throws; a client whose connection broke is discarded, not returned to the pool.
 */
export async function withRawTransaction<T>(
  db: Db,
  work: (client: pg.PoolClient, run: <R>(query: CompiledQuery<R>) => Promise<R[]>) => Promise<T>,
): Promise<T> {
  const pool = pools.get(db)
  if (!pool) throw new Error('withRawTransaction needs a handle made by createDb')
  const client = await pool.connect()
  let broken: Error | undefined
  // The connection can drop while `work` waits for something else than the database (a request
  // body, say), with no query to fail: the work must fail then, not when it next uses the client.
  let onError: (error: Error) => void = () => {}
  const connectionLost = new Promise<never>((_, reject) => {
    onError = (error) => {
      broken ??= error
      reject(error)
    }
  })
  connectionLost.catch(() => {})
  client.on('error', onError)
  const run = async <R>(query: CompiledQuery<R>) => (await client.query(query.sql, query.parameters as unknown[])).rows as R[]
  try {
    await client.query('BEGIN')
    const working = work(client, run)
    // Left behind when the connection is lost first: it fails on its own, unobserved.
    working.catch(() => {})
    const result = await Promise.race([working, connectionLost])
    await client.query('COMMIT')
    return result
  } catch (error) {
    if (!broken) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError
      })
    }
    throw error
  } finally {
    client.off('error', onError)
    client.release(broken)
  }
}

/** SQLSTATE of a statement cancelled by statement_timeout (or a cancel request). */
export const QUERY_CANCELED = '57014'

/**
 * Runs read-only `work` in one repeatable-read snapshot whose statements Postgres cancels after
 * `timeoutMs` each (QUERY_CANCELED). The transaction is begun and limited in one round trip.
 */
export async function withReadSnapshot<T>(db: Db, timeoutMs: number, work: (handle: DbHandle) => Promise<T>): Promise<T> {
  return db.connection().execute(async (connection) => {
    // No parameters, so one simple-protocol message may carry both statements.
    await sql.raw(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`).execute(connection)
    try {
      const result = await work(connection)
      await sql.raw('COMMIT').execute(connection)
      return result
    } catch (error) {
      await sql.raw('ROLLBACK').execute(connection).catch(() => {})
      throw error
    }
  })
}
