import { Kysely, PostgresDialect, type IsolationLevel, type Transaction } from 'kysely'
import type pg from 'pg'
import { poolOf, type Db } from './database.js'
import type { Database } from './schema.js'

/**
 * One transaction, seen three ways on the same connection: `db`, a Kysely transaction for every
 * query Kysely can build; `client`, the pg client itself for what it cannot (COPY); and `onCommit`,
 * for work that must follow the commit and never happen without it (removing files that the
 * committed rows no longer name). A Tx is a db handle: data access functions take `tx.db`.
 */
export interface Tx {
  readonly db: Transaction<Database>
  readonly client: pg.PoolClient
  /** Runs after COMMIT, in order; never after a rollback. A hook that fails is logged by `onHookError`, not rethrown. */
  onCommit(hook: () => Promise<void> | void): void
}

export interface TransactionOptions {
  /** What to do with a failed after-commit hook; the transaction has committed, so its caller still succeeds. */
  onHookError?: (error: unknown) => void
  /** For work that must read one snapshot of several tables (building a stage); Postgres' default otherwise. */
  isolation?: IsolationLevel
}

/**
 * Runs `work` in a transaction on a dedicated pg client. Commits when `work` resolves, rolls back
 * when it throws. The connection can drop while `work` waits for something else than the database
 * (a request body, say), with no query to fail: the work fails then, not when it next uses the
 * client, and a client whose connection broke is discarded, not returned to the pool.
 */
export async function inTransaction<T>(db: Db, work: (tx: Tx) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  const client = await poolOf(db).connect()
  let broken: Error | undefined
  let onError: (error: Error) => void = () => {}
  const connectionLost = new Promise<never>((_, reject) => {
    onError = (error) => {
      broken ??= error
      reject(error)
    }
  })
  connectionLost.catch(() => {})
  client.on('error', onError)
  const hooks: (() => Promise<void> | void)[] = []
  try {
    const begin = onClient(client).startTransaction()
    const trx = await (options.isolation ? begin.setIsolationLevel(options.isolation) : begin).execute()
    let result: T
    try {
      const working = work({ db: trx, client, onCommit: (hook) => hooks.push(hook) })
      // Left behind when the connection is lost first: it fails on its own, unobserved.
      working.catch(() => {})
      result = await Promise.race([working, connectionLost])
      await trx.commit().execute()
    } catch (error) {
      if (!broken) {
        await trx
          .rollback()
          .execute()
          .catch((rollbackError: Error) => {
            broken = rollbackError
          })
      }
      throw error
    }
    for (const hook of hooks) {
      try {
        await hook()
      } catch (error) {
        options.onHookError?.(error)
      }
    }
    return result
  } finally {
    client.off('error', onError)
    client.release(broken)
  }
}

/** A Kysely instance whose only connection is `client`; Kysely's release of it is a no-op, ours is real. */
function onClient(client: pg.PoolClient): Kysely<Database> {
  const lease = { query: client.query.bind(client), release: () => {} } as unknown as pg.PoolClient
  const pool = { connect: async () => lease, end: async () => {} } as unknown as pg.Pool
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
}
