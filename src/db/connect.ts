import type { Config } from '../config.js'
import { createDb, type Db } from './database.js'
import { ensureDatabase, startEmbeddedCluster, type EmbeddedCluster } from './embedded.js'
import { terminateOwnSessions } from './own-sessions.js'

export interface Connection {
  db: Db
  /** Where the data lives, for the start-up log line. */
  description: string
  embedded: boolean
  /**
   * Shutdown, once the drain time is over: the pool takes no new work, and the sessions of this
   * process are ended (their statements cancelled, their transactions rolled back).
   */
  interrupt(): Promise<void>
  /** `work` on a pool of one connection of its own, opened for it and closed after it: for what a shutdown writes after `interrupt`. */
  withSpareDb<T>(work: (db: Db) => Promise<T>): Promise<T>
  /**
   * Closes the pool and stops the embedded cluster (unless another process still uses it). With a
   * deadline (epoch ms), sessions that still hold on are ended when it passes, and the cluster is
   * stopped in the time that is left.
   */
  close(deadline?: number): Promise<void>
}

const EMBEDDED_DATABASE = 'catalog'

/** DATABASE_URL when set; otherwise the embedded Postgres with its data in DATA_DIR. */
export async function connect(config: Config, log?: (line: string) => void): Promise<Connection> {
  if (config.DATABASE_URL) {
    const db = createDb(config.DATABASE_URL, config.DB_POOL_SIZE)
    return { db, description: redactUrl(config.DATABASE_URL), embedded: false, ...closing(db, config.DATABASE_URL) }
  }
  const cluster = await startEmbeddedCluster(config.DATA_DIR, { log })
  await ensureDatabase(cluster, EMBEDDED_DATABASE)
  const url = cluster.urlFor(EMBEDDED_DATABASE)
  const db = createDb(url, config.DB_POOL_SIZE)
  return { db, description: config.DATA_DIR, embedded: true, ...closing(db, url, cluster) }
}

// Time kept back from the deadline for stopping the embedded cluster.
const CLUSTER_STOP_RESERVE_MS = 3_000

function closing(db: Db, url: string, cluster?: EmbeddedCluster): Pick<Connection, 'interrupt' | 'withSpareDb' | 'close'> {
  let destroyed: Promise<void> | undefined
  const destroy = () => (destroyed ??= db.destroy().catch(() => {}))
  return {
    interrupt: async () => {
      void destroy()
      await terminateOwnSessions(url).catch(() => 0)
    },
    withSpareDb: async (work) => {
      const spare = createDb(url, 1)
      try {
        return await work(spare)
      } finally {
        await spare.destroy().catch(() => {})
      }
    },
    close: async (deadline) => {
      if (deadline === undefined) await destroy()
      else if (!(await settlesWithin(destroy(), deadline - CLUSTER_STOP_RESERVE_MS - Date.now()))) await terminateOwnSessions(url).catch(() => 0)
      const timeoutSeconds = deadline === undefined ? undefined : Math.max(1, (deadline - Date.now()) / 1000)
      await cluster?.stop({ timeoutSeconds })
    },
  }
}

/** Whether `work` settles (resolves or fails) within `ms`; it goes on either way. */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms))
  })
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      timeout,
    ])
  } finally {
    clearTimeout(timer)
  }
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return '(DATABASE_URL)'
  }
}
