import { loadConfig } from '../config.js'
import { startServer } from '../server.js'

// The close keeps to SHUTDOWN_GRACE_SECONDS, an immediate stop of the embedded Postgres can follow;
// past this margin too, something hangs that only exiting ends.
const LAST_RESORT_MARGIN_MS = 15_000
// A second signal within this of the first is the first one forwarded (npm sends it on to its child).
const SAME_SIGNAL_MS = 1000

/** Runs the server until SIGINT/SIGTERM: stop accepting, drain, end what is left, stop the database, exit 0. */
export async function serve(): Promise<void> {
  // A signal during start-up is remembered and honoured once the server is up, so that an embedded
  // Postgres started a moment ago is stopped too, not left running.
  let pendingSignal: NodeJS.Signals | undefined
  const early = (signal: NodeJS.Signals) => {
    pendingSignal = signal
  }
  process.on('SIGINT', early)
  process.on('SIGTERM', early)
  const config = loadConfig()
  const server = await startServer(config)
  process.off('SIGINT', early)
  process.off('SIGTERM', early)
  let closingSince: number | undefined
  const shutdown = (signal: NodeJS.Signals) => {
    if (closingSince !== undefined) {
      // A terminal's Ctrl-C reaches npm and the server alike, and npm forwards it: a second signal
      // follows the first within milliseconds, and is the same Ctrl-C. A later one shortens the
      // drain. Neither skips stopping the embedded Postgres, which would be left running.
      if (Date.now() - closingSince < SAME_SIGNAL_MS) {
        server.app.log.info(`${signal} again at once (a parent such as npm forwards it): the same shutdown goes on`)
        return
      }
      server.app.log.warn(`${signal} again: ending what is under way now, then stopping the database`)
      server.hurry()
      return
    }
    closingSince = Date.now()
    server.app.log.info(`${signal} received: draining requests and runs for up to ${config.SHUTDOWN_GRACE_SECONDS} s, then shutting down`)
    // Work cut off by the shutdown may fail where nothing awaits it any more: that must not turn a
    // clean stop into a crash.
    process.on('unhandledRejection', (error) => server.app.log.warn({ err: error }, 'work cut off by the shutdown failed'))
    const timer = setTimeout(
      () => {
        server.app.log.error('shutdown took too long; exiting')
        process.exit(1)
      },
      config.SHUTDOWN_GRACE_SECONDS * 1000 + LAST_RESORT_MARGIN_MS,
    )
    timer.unref()
    server.close().then(
      () => {
        server.app.log.info('shut down: requests drained, runs ended, the database closed')
        process.exit(0)
      },
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
