import type { AppDeps } from '../../src/app.js'
import { eventually } from './eventually.js'

// The app's log kept in memory, for tests of what an operator reads: pass `options` as the app's
// logger (useTestApp(env, { logger: log.options })) and read the lines back, as written.

/** pino's numeric levels. */
export const LEVEL = { info: 30, warn: 40, error: 50 } as const

export interface LogLine {
  level: number
  msg: string
  [field: string]: unknown
}

export interface LogCapture {
  options: NonNullable<AppDeps['logger']>
  /** Every line as written (JSON text). */
  raw: string[]
  lines: LogLine[]
  /** Waits for the first line that `matches`. */
  line(what: string, matches: (line: LogLine) => boolean): Promise<LogLine>
}

export function captureLog(level = 'info'): LogCapture {
  const raw: string[] = []
  const lines: LogLine[] = []
  const stream = {
    write(text: string) {
      raw.push(text)
      lines.push(JSON.parse(text) as LogLine)
    },
  }
  return {
    options: { level, stream },
    raw,
    lines,
    line: (what, matches) => eventually(async () => lines.find(matches), what),
  }
}
