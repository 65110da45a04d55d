import { hostname } from 'node:os'
import type { FastifyServerOptions } from 'fastify'
import type { Config } from '../config.js'

type LoggerOption = FastifyServerOptions['logger']

/**
 * The app's pino options. `pid` on a line is always a run's pid (the id the platform interface
 * answers with and the site errors carry), so that `grep <pid>` follows one run through every
 * process's log: pino's own `pid`, the operating system's process id, is renamed `processId`.
 * Options a caller gives (tests: a level and a stream) are laid over these; `false` logs nothing.
 */
export function logOptions(config: Config, given: LoggerOption): LoggerOption {
  if (given === false) return false
  const defaults = {
    level: config.LOG_LEVEL,
    base: { processId: process.pid, hostname: hostname() },
    redact: { paths: ['req.headers.authorization', 'req.headers["x-auth-token"]'], censor: '[redacted]' },
  }
  return typeof given === 'object' ? { ...defaults, ...given } : defaults
}
