import { createHash } from 'node:crypto'
import { Cron } from 'croner'
import { isKnownTimeZone } from '../config.js'

// import_schedule text (SPEC.md "Schedule format"): optional first line TZ=<zone>, then five-field
// cron lines; `H` in the minute field is a stable per-site minute so that sites spread out.
export interface ParsedSchedule {
  timeZone: string | undefined
  /** Cron lines as written (with `H` still in them). */
  lines: string[]
}

export class ScheduleError extends Error {}

export function parseSchedule(text: string): ParsedSchedule {
  const rawLines = text.split(/\r?\n/)
  const lines: string[] = []
  let timeZone: string | undefined
  rawLines.forEach((raw, index) => {
    const line = raw.trim()
    const lineNumber = index + 1
    if (line === '') return
    if (/^TZ\s*=/i.test(line)) {
      if (lines.length > 0 || timeZone !== undefined) {
        throw new ScheduleError(`line ${lineNumber} "${line}": TZ= is only allowed as the first line`)
      }
      const zone = line.slice(line.indexOf('=') + 1).trim()
      if (!isKnownTimeZone(zone)) throw new ScheduleError(`line ${lineNumber} "${line}": unknown time zone "${zone}"`)
      timeZone = zone
      return
    }
    const fields = line.split(/\s+/)
    if (fields.length !== 5) {
      throw new ScheduleError(`line ${lineNumber} "${line}": a cron line needs exactly five fields (minute hour day month weekday)`)
    }
    if (fields.slice(1).some((f) => /(^|[,/-])H([,/-]|$)/i.test(f))) {
      throw new ScheduleError(`line ${lineNumber} "${line}": H is only allowed in the minute field`)
    }
    try {
      new Cron(withMinute(line, 0), { paused: true, timezone: timeZone ?? 'UTC' })
    } catch (error) {
      const reason = error instanceof Error ? error.message : 'invalid'
      throw new ScheduleError(`line ${lineNumber} "${line}": not a valid cron expression (${reason})`)
    }
    lines.push(line)
  })
  if (timeZone !== undefined && lines.length === 0) {
    throw new ScheduleError('a TZ= line must be followed by at least one cron line')
  }
  return { timeZone, lines }
}

/** The minute that `H` stands for on this site: stable, and spread evenly over the hour. */
export function hashedMinute(siteId: string): number {
  return createHash('sha256').update(siteId).digest().readUInt32BE(0) % 60
}

/** Next time after `after` at which the schedule fires for this site, or null for no schedule. */
export function nextRunAt(text: string, siteId: string, defaultTimeZone: string, after: Date): Date | null {
  const schedule = parseSchedule(text)
  const timezone = schedule.timeZone ?? defaultTimeZone
  let next: Date | null = null
  for (const line of schedule.lines) {
    const cron = new Cron(withMinute(line, hashedMinute(siteId)), { paused: true, timezone })
    let candidate = cron.nextRun(after)
    // In a repeated hour (DST fall-back) croner can answer an instant at or before `after`; asking
    // again from that answer moves past it. Bounded, so that a croner surprise cannot spin.
    for (let attempt = 0; candidate && candidate <= after && attempt < 5; attempt++) candidate = cron.nextRun(candidate)
    if (candidate && candidate <= after) candidate = null
    if (candidate && (next === null || candidate < next)) next = candidate
  }
  return next
}

function withMinute(line: string, minute: number): string {
  const [first, ...rest] = line.split(/\s+/)
  return [first?.toUpperCase() === 'H' ? String(minute) : first, ...rest].join(' ')
}
