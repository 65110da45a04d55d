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

/** Bounds of a schedule text (MAX_SCHEDULE_LINES, MAX_SCHEDULE_CHARS). */
export interface ScheduleLimits {
  maxLines: number
  maxChars: number
}

/**
 * Refuses a schedule text over its bounds without splitting or parsing it: every scheduler pass
 * evaluates each schedule, so the cost of one must stay small whatever a client stored.
 */
export function checkScheduleSize(text: string, limits: ScheduleLimits): void {
  if (text.length > limits.maxChars) {
    throw new ScheduleError(`at most ${limits.maxChars} characters (MAX_SCHEDULE_CHARS); this one has ${text.length}`)
  }
  let lines = 1
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) {
    // A final newline ends the last line rather than starting another.
    if (at < text.length - 1) lines++
  }
  if (lines > limits.maxLines) {
    throw new ScheduleError(`at most ${limits.maxLines} lines (MAX_SCHEDULE_LINES); this one has ${lines}`)
  }
}

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
  return earliest(schedule.lines.map((line) => nextRunOfLine(line, siteId, timezone, after)))
}

/**
 * Next time after `after` at which one cron line of the site fires, or null. One line can take a few
 * milliseconds (croner searches years ahead for a date that never comes, 30 February say), so the
 * scheduler evaluates a schedule line by line and lets other work run in between.
 */
export function nextRunOfLine(line: string, siteId: string, timezone: string, after: Date): Date | null {
  const cron = new Cron(withMinute(line, hashedMinute(siteId)), { paused: true, timezone })
  let candidate = cron.nextRun(after)
  // In a repeated hour (DST fall-back) croner can answer an instant at or before `after`; asking
  // again from that answer moves past it. Bounded, so that a croner surprise cannot spin.
  for (let attempt = 0; candidate && candidate <= after && attempt < 5; attempt++) candidate = cron.nextRun(candidate)
  return candidate && candidate > after ? candidate : null
}

export function earliest(candidates: (Date | null)[]): Date | null {
  let next: Date | null = null
  for (const candidate of candidates) if (candidate && (next === null || candidate < next)) next = candidate
  return next
}

function withMinute(line: string, minute: number): string {
  const [first, ...rest] = line.split(/\s+/)
  return [first?.toUpperCase() === 'H' ? String(minute) : first, ...rest].join(' ')
}
