import { createHash } from 'node:crypto'
import { Cron, CronPattern } from 'croner'
import { isKnownTimeZone } from '../config.js'
import type { ScheduleLimits } from '../accounts/object-limits.js'
import { excerpt } from '../input/text-input.js'

// import_schedule text (docs/interface.md "Schedule format"): optional first line TZ=<zone>, then five-field
// cron lines; `H` in the minute field is a stable per-site minute so that sites spread out.
export interface ParsedSchedule {
  timeZone: string | undefined
  /** Cron lines as written (with `H` still in them). */
  lines: string[]
}

export class ScheduleError extends Error {}

// The bounds are an account limit like the others; named here too for the schedule's readers.
export type { ScheduleLimits }

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
    if (line === '') return
    // Client text is quoted cut short: a 5,000-character TZ= value is not worth echoing.
    const at = `line ${index + 1} "${excerpt(line)}"`
    if (/^TZ\s*=/i.test(line)) {
      if (lines.length > 0 || timeZone !== undefined) throw new ScheduleError(`${at}: TZ= is only allowed as the first line`)
      const zone = line.slice(line.indexOf('=') + 1).trim()
      if (!isKnownTimeZone(zone)) throw new ScheduleError(`${at}: unknown time zone "${excerpt(zone)}"`)
      timeZone = zone
      return
    }
    const fields = line.split(/\s+/)
    if (fields.length !== 5) throw new ScheduleError(`${at}: a cron line needs exactly five fields (minute hour day month weekday)`)
    if (fields.slice(1).some((f) => /(^|[,/-])H([,/-]|$)/i.test(f))) throw new ScheduleError(`${at}: H is only allowed in the minute field`)
    let pattern: CronPattern
    try {
      pattern = new CronPattern(withMinute(line, 0), timeZone ?? 'UTC')
    } catch (error) {
      const reason = error instanceof Error ? error.message : 'invalid'
      throw new ScheduleError(`${at}: not a valid cron expression (${excerpt(reason)})`)
    }
    if (!firesEveryYear(pattern)) {
      throw new ScheduleError(
        `${at}: fires less than once a year (its day, month and weekday fields do not meet in every year, as on 31 September or 29 February)`,
      )
    }
    lines.push(line)
  })
  if (timeZone !== undefined && lines.length === 0) {
    throw new ScheduleError('a TZ= line must be followed by at least one cron line')
  }
  return { timeZone, lines }
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
// croner's day-of-week bits: one per nth occurrence (#1..#5), and one for the last (#L); a plain
// weekday has them all.
const NTH_BITS = [1, 2, 4, 8, 16]
const LAST_BIT = 32

/**
 * Whether a line fires in every calendar year. croner searches up to the year 3000 for a date that
 * never comes (31 September: milliseconds per line, tens of them in zones with odd offsets), so a
 * line that is not sure to fire within a year is refused instead of searched for. A year is known
 * by the weekday of 1 January and whether it is a leap year: the line must fire in all 14 kinds.
 * The day, `L` and weekday (`#n`, `#L`) rules are croner's, day OR weekday when both are restricted
 * (its default, legacy mode).
 */
export function firesEveryYear(pattern: CronPattern): boolean {
  return [false, true].every((leap) =>
    [0, 1, 2, 3, 4, 5, 6].every((newYearWeekday) => {
      let firstWeekday = newYearWeekday
      return MONTH_DAYS.some((days, month) => {
        const length = month === 1 && leap ? 29 : days
        const fires = (pattern.month[month] ?? 0) !== 0 && matchesSomeDay(pattern, length, firstWeekday)
        firstWeekday = (firstWeekday + length) % 7
        return fires
      })
    }),
  )
}

function matchesSomeDay(pattern: CronPattern, length: number, firstWeekday: number): boolean {
  for (let day = 1; day <= length; day++) {
    let match = (pattern.day[day - 1] ?? 0) !== 0 || (pattern.lastDayOfMonth && day === length)
    if (!pattern.starDOW) {
      const bits = pattern.dayOfWeek[(firstWeekday + day - 1) % 7] ?? 0
      const nth = NTH_BITS[Math.ceil(day / 7) - 1] ?? 0
      const weekday = (bits & nth) !== 0 || ((bits & LAST_BIT) !== 0 && day + 7 > length)
      match = pattern.starDOM ? weekday : match || weekday
    }
    if (match) return true
  }
  return false
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
