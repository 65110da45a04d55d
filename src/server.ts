import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import type { Config } from './config.js'
import { connect, settlesWithin, type Connection } from './db/connect.js'
import { migrateToLatest } from './db/migrate.js'

// Share of SHUTDOWN_GRACE_SECONDS in which requests and runs may finish on their own; the rest is
// for ending what is left and stopping the database.
const DRAIN_SHARE = 0.5

// What a start that failed after the app was ready (its port taken, say) gives what it started.
const FAILED_START_GRACE_MS = 5_000

export interface RunningServer {
  app: FastifyInstance
  connection: Connection
  close(): Promise<void>
  /** Ends the drain of a close under way at once: what is left is ended, and the database still stopped. */
  hurry(): void
}

/**
 * Process concerns only: connect, migrate, listen, and a close that drains, then ends what is left,
 * before stopping the database, all within SHUTDOWN_GRACE_SECONDS.
 */
export async function startServer(config: Config): Promise<RunningServer> {
  // The embedded cluster's notes (where it keeps its files) come before the app and its logger exist.
  const notes: string[] = []
  const connection = await connect(config, (line) => notes.push(line))
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
    for (const note of notes) app.log.info(note)
    await app.listen({ port: config.PORT, host: config.HOST })
  } catch (error) {
    // Runs its workers may have claimed since the app was ready are ended and handed back at once.
    if (app) await drainAndClose(app, connection, { graceMs: FAILED_START_GRACE_MS, hurried: Promise.resolve(false) })
    else await connection.close()
    throw error
  }
  const listening = app
  let hurry = () => {}
  const hurried = new Promise<boolean>((resolve) => (hurry = () => resolve(false)))
  return {
    app: listening,
    connection,
    hurry: () => hurry(),
    close: () => drainAndClose(listening, connection, { graceMs: config.SHUTDOWN_GRACE_SECONDS * 1000, hurried }),
  }
}

/**
 * Closes the app and stops the database within `graceMs`: requests and runs get DRAIN_SHARE of it to
 * finish (until `hurried`); then what is left is ended, and the runs it cut off are handed back once
 * their sessions are gone, so that no other process meets their old attempts still writing.
 */
async function drainAndClose(app: FastifyInstance, connection: Connection, { graceMs, hurried }: { graceMs: number; hurried: Promise<boolean> }) {
  const deadline = Date.now() + graceMs
  // No new runs and no new requests; the ones under way get the drain time to finish.
  const runsStopped = app.runWorker.stop(graceMs)
  const appClosed = app.close()
  if (!(await Promise.race([settlesWithin(Promise.all([runsStopped, appClosed]), graceMs * DRAIN_SHARE), hurried]))) {
    // A long export query, say. Its run is retried elsewhere (or here after a restart), so its work
    // is ended rather than waited for: the pool takes nothing new, so nothing of it is recorded as
    // failed, and this process's sessions are ended in the database.
    app.log.warn(`requests or runs still under way after ${Math.round((graceMs * DRAIN_SHARE) / 1000)} s: ending them; interrupted runs are retried`)
    const cut = app.runWorker.interrupt()
    app.server.closeAllConnections()
    await connection.interrupt()
    await connection.withSpareDb((db) => app.runWorker.handBackInterrupted(db, cut))
  }
  await connection.close(deadline)
}
