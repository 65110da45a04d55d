import type { Config } from '../config.js'
import { createDb, type Db } from './database.js'
import { ensureDatabase, startEmbeddedCluster } from './embedded.js'

export interface Connection {
  db: Db
  /** Where the data lives, for the start-up log line. */
  description: string
  embedded: boolean
  /** Closes the pool and stops the embedded cluster if this process started it. */
  close(): Promise<void>
}

const EMBEDDED_DATABASE = 'catalog'

/** DATABASE_URL when set; otherwise the embedded Postgres with its data in DATA_DIR. */
export async function connect(config: Config, log?: (line: string) => void): Promise<Connection> {
  if (config.DATABASE_URL) {
    const db = createDb(config.DATABASE_URL, config.DB_POOL_SIZE)
    return { db, description: redactUrl(config.DATABASE_URL), embedded: false, close: () => db.destroy() }
  }
  const cluster = await startEmbeddedCluster(config.DATA_DIR, { log })
  await ensureDatabase(cluster, EMBEDDED_DATABASE)
  const db = createDb(cluster.urlFor(EMBEDDED_DATABASE), config.DB_POOL_SIZE)
  return {
    db,
    description: config.DATA_DIR,
    embedded: true,
    close: async () => {
      await db.destroy()
      await cluster.stop()
    },
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
