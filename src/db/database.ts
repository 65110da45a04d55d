import { randomBytes } from 'node:crypto'
import { Kysely, PostgresDialect, type Transaction } from 'kysely'
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

/** The pg pool behind a handle made by createDb (the transaction primitive takes its clients from it). */
export function poolOf(db: Db): pg.Pool {
  const pool = pools.get(db)
  if (!pool) throw new Error('a handle made by createDb is needed')
  return pool
}

export interface PoolUsage {
  size: number
  busy: number
  /** Open connections nobody uses now. */
  idle: number
  /** Requests waiting for a connection. */
  waiting: number
}

/** How busy a handle's pool is, for the health check and the metrics. */
export function poolUsage(db: Db): PoolUsage | undefined {
  const pool = pools.get(db)
  if (!pool) return undefined
  return { size: pool.options.max, busy: pool.totalCount - pool.idleCount, idle: pool.idleCount, waiting: pool.waitingCount }
}

/**
 * Whether the database of a handle's pool answers, on a connection of its own (opened and closed
 * here): for a health check when every pooled connection is busy, where a query would queue.
 */
export async function databaseAnswers(db: Db, timeoutMs: number): Promise<boolean> {
  const pool = pools.get(db)
  if (!pool) return false
  const client = new pg.Client({ ...pool.options, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('SELECT 1')
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

/** SQLSTATE of a statement cancelled by statement_timeout (or a cancel request). */
export const QUERY_CANCELED = '57014'
