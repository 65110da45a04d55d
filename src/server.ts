import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import type { Config } from './config.js'
import { connect, type Connection } from './db/connect.js'
import { migrateToLatest } from './db/migrate.js'
import { runCleanup } from './imports/cleanup.js'

// Hourly cleanup, by any server process (every step is idempotent): streams deleted 7 days ago, the
// rows of applied batches, and the stage rows of deleted sites.
const PURGE_INTERVAL_MS = 60 * 60 * 1000

export interface RunningServer {
  app: FastifyInstance
  connection: Connection
  close(): Promise<void>
}

/** Process concerns only: connect, migrate, listen, and a close that drains before stopping the database. */
export async function startServer(config: Config): Promise<RunningServer> {
  const connection = await connect(config)
  let app: FastifyInstance | undefined
  try {
    await migrateToLatest(connection.db)
    app = await buildApp({ db: connection.db, config })
    if (connection.embedded) {
      app.log.info(
        { dataDir: config.DATA_DIR },
        `Using the embedded Postgres with its data in ${config.DATA_DIR}; set DATABASE_URL=postgres://user:pass@host:5432/db to use a real Postgres instead`,
      )
    } else {
      app.log.info(`Using the Postgres at ${connection.description}`)
    }
    await app.listen({ port: config.PORT, host: config.HOST })
  } catch (error) {
    await app?.close()
    await connection.close()
    throw error
  }
  const listening = app
  const purge = setInterval(() => {
    runCleanup(connection.db, new Date()).catch((error: unknown) => listening.log.warn({ err: error }, 'hourly cleanup failed'))
  }, PURGE_INTERVAL_MS)
  purge.unref()
  return {
    app: listening,
    connection,
    close: async () => {
      clearInterval(purge)
      // Stop accepting, let in-flight requests finish, then release the database.
      await listening.close()
      await connection.close()
    },
  }
}
