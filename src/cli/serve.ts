import { loadConfig } from '../config.js'
import { startServer } from '../server.js'

const DRAIN_TIMEOUT_MS = 30_000

/** Runs the server until SIGINT/SIGTERM: stop accepting, drain, stop the database, exit 0. */
export async function serve(): Promise<void> {
  // A signal during start-up is remembered and honoured once the server is up, so that an embedded
  // Postgres started a moment ago is stopped too, not left running.
  let pendingSignal: NodeJS.Signals | undefined
  const early = (signal: NodeJS.Signals) => {
    pendingSignal = signal
  }
  process.on('SIGINT', early)
  process.on('SIGTERM', early)
  const server = await startServer(loadConfig())
  process.off('SIGINT', early)
  process.off('SIGTERM', early)
  let closing = false
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) {
      server.app.log.warn(`${signal} again: exiting without waiting`)
      process.exit(1)
    }
    closing = true
    server.app.log.info(`${signal} received: draining requests and shutting down`)
    const timer = setTimeout(() => {
      server.app.log.error('shutdown took too long; exiting')
      process.exit(1)
    }, DRAIN_TIMEOUT_MS)
    timer.unref()
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        server.app.log.error({ err: error }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  process.on('SIGINT', shutdown)
  process.on('SIGTERM', shutdown)
  if (pendingSignal) shutdown(pendingSignal)
}
