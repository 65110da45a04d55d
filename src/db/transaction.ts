import {
  CompiledQuery,
  Kysely,
  PostgresDialect,
  PostgresDriver,
  type DatabaseConnection,
  type Driver,
  type IsolationLevel,
  type PostgresDialectConfig,
  type Transaction,
  type TransactionSettings,
} from 'kysely'
import pg from 'pg'
import { poolOf, type Db, type DbHandle } from './database.js'
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
  /**
   * Ends the transaction with ROLLBACK instead of COMMIT once `work` resolves; its result is still
   * returned. For an outcome that must leave nothing behind but is no failure (an empty upload).
   */
  rollbackOnly(): void
}

export interface TransactionOptions {
  /** What to do with a failed after-commit hook; the transaction has committed, so its caller still succeeds. */
  onHookError?: (error: unknown) => void
  /** For work that must read one snapshot of several tables (building a stage); Postgres' default otherwise. */
  isolation?: IsolationLevel
  /** READ ONLY: Postgres refuses any write. */
  readOnly?: boolean
  /**
   * `SET LOCAL statement_timeout`: Postgres cancels each statement of the transaction that runs
   * longer (QUERY_CANCELED). Sent with BEGIN in one message, so it costs no round trip of its own.
   */
  statementTimeoutMs?: number
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
  const withCommit: string[] = []
  let rollbackOnly = false
  try {
    let begin = onClient(client, options.statementTimeoutMs).startTransaction()
    if (options.isolation) begin = begin.setIsolationLevel(options.isolation)
    if (options.readOnly) begin = begin.setAccessMode('read only')
    const trx = await begin.execute()
    sentWithCommit.set(trx, withCommit)
    let result: T
    try {
      const working = work({ db: trx, client, onCommit: (hook) => hooks.push(hook), rollbackOnly: () => (rollbackOnly = true) })
      // Left behind when the connection is lost first: it fails on its own, unobserved.
      working.catch(() => {})
      result = await Promise.race([working, connectionLost])
      if (rollbackOnly) {
        await trx.rollback().execute()
        return result
      }
      if (withCommit.length > 0) await client.query(`${withCommit.join(';\n')};\nCOMMIT`)
      else await trx.commit().execute()
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

// The statements each open transaction sends with its COMMIT, by its handle.
const sentWithCommit = new WeakMap<object, string[]>()

/**
 * Runs `query` in the message that commits the transaction `db` belongs to: a write that must commit
 * with the transaction's others, or not at all, and that nothing in the transaction reads back (an
 * activity entry). It costs no round trip of its own: an activity entry sent on its own added
 * 0.55 ms to a 2 ms change, sent with the COMMIT 0.23 ms (bench/results/activity.md). When it
 * fails, the COMMIT fails and the transaction rolls back. Outside a transaction, it runs at once.
 */
export async function sendWithCommit(db: DbHandle, query: CompiledQuery): Promise<void> {
  const pending = sentWithCommit.get(db)
  if (!pending) {
    await db.executeQuery(query)
    return
  }
  // The simple protocol that carries several statements takes no parameters: they go in as literals.
  pending.push(query.sql.replace(/\$(\d+)/g, (_, index: string) => literal(query.parameters[Number(index) - 1])))
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL'
  if (typeof value === 'number' || typeof value === 'bigint') return String(value)
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (value instanceof Date) return pg.escapeLiteral(value.toISOString())
  return pg.escapeLiteral(typeof value === 'string' ? value : JSON.stringify(value))
}

/**
 * Runs read-only `work` in one repeatable-read snapshot whose statements Postgres cancels after
 * `timeoutMs` each (QUERY_CANCELED). Begun and limited in one round trip, like any transaction
 * with a statement timeout.
 */
export function withReadSnapshot<T>(db: Db, timeoutMs: number, work: (handle: DbHandle) => Promise<T>): Promise<T> {
  return inTransaction(db, (tx) => work(tx.db), { isolation: 'repeatable read', readOnly: true, statementTimeoutMs: timeoutMs })
}

/** A Kysely instance whose only connection is `client`; Kysely's release of it is a no-op, ours is real. */
function onClient(client: pg.PoolClient, statementTimeoutMs: number | undefined): Kysely<Database> {
  const lease = { query: client.query.bind(client), release: () => {} } as unknown as pg.PoolClient
  const pool = { connect: async () => lease, end: async () => {} } as unknown as pg.Pool
  if (statementTimeoutMs === undefined) return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  const setting = `SET LOCAL statement_timeout = ${Math.max(1, Math.floor(statementTimeoutMs))}`
  return new Kysely<Database>({ dialect: new SettingAtBeginDialect(pool, setting) })
}

/** Postgres, with a setting sent in the message that begins each transaction. */
class SettingAtBeginDialect extends PostgresDialect {
  constructor(
    private readonly pool: pg.Pool,
    private readonly setting: string,
  ) {
    super({ pool })
  }

  override createDriver(): Driver {
    return new SettingAtBeginDriver({ pool: this.pool }, this.setting)
  }
}

/**
 * Begins with `setting` in the same message: a statement without parameters goes by the simple
 * protocol, which carries several at once, so the setting costs no round trip of its own.
 */
class SettingAtBeginDriver extends PostgresDriver {
  constructor(
    config: PostgresDialectConfig,
    private readonly setting: string,
  ) {
    super(config)
  }

  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const begin = ['START TRANSACTION', settings.isolationLevel && `ISOLATION LEVEL ${settings.isolationLevel}`, settings.accessMode?.toUpperCase()]
    await connection.executeQuery(CompiledQuery.raw(`${begin.filter(Boolean).join(' ')}; ${this.setting}`))
  }
}
