import { describe, expect, it } from 'vitest'
import { ScheduleError, hashedMinute, nextRunAt, parseSchedule } from '../../src/jobs/schedule.js'

// Expected instants are written out by hand from local time, never recomputed with the code under test.
const next = (text: string, after: string, defaultZone = 'UTC', siteId = '1') => nextRunAt(text, siteId, defaultZone, new Date(after))?.toISOString()

describe('parseSchedule', () => {
  it('reads an optional TZ line and five-field cron lines, ignoring blank lines and CRLF', () => {
    expect(parseSchedule('TZ=Europe/Berlin\r\n\r\nH 3 * * *\r\n0 12 * * MON-THU\r\n')).toEqual({
      timeZone: 'Europe/Berlin',
      lines: ['H 3 * * *', '0 12 * * MON-THU'],
    })
    expect(parseSchedule('')).toEqual({ timeZone: undefined, lines: [] })
  })

  it.each([
    ['0 3 * *', /line 1 "0 3 \* \*": a cron line needs exactly five fields/],
    ['0 0 3 * * *', /line 1 .*exactly five fields/],
    ['0 H * * *', /line 1 "0 H \* \* \*": H is only allowed in the minute field/],
    ['0 3 * * *\nTZ=UTC', /line 2 "TZ=UTC": TZ= is only allowed as the first line/],
    ['TZ=Mars/Olympus\n0 3 * * *', /line 1 "TZ=Mars\/Olympus": unknown time zone/],
    ['0 3 * * *\n61 3 * * *', /line 2 "61 3 \* \* \*": not a valid cron expression/],
    ['TZ=UTC', /a TZ= line must be followed by at least one cron line/],
  ])('refuses %j naming the line', (text, message) => {
    expect(() => parseSchedule(text)).toThrow(ScheduleError)
    expect(() => parseSchedule(text)).toThrow(message)
  })
})

describe('hashedMinute', () => {
  it('is stable per site and spreads sites over the hour', () => {
    expect(hashedMinute('1')).toBe(39)
    expect(hashedMinute('2')).toBe(14)
    expect(hashedMinute('1')).toBe(hashedMinute('1'))
    const minutes = new Set(Array.from({ length: 100 }, (_, i) => hashedMinute(String(i + 1))))
    expect([...minutes].every((m) => m >= 0 && m <= 59)).toBe(true)
    expect(minutes.size).toBeGreaterThanOrEqual(30)
  })
})

describe('nextRunAt', () => {
  it('fires in UTC by default, strictly after the given instant, at the earliest of several lines', () => {
    expect(next('0 6 * * *', '2026-05-01T00:00:00Z')).toBe('2026-05-01T06:00:00.000Z')
    expect(next('0 6 * * *', '2026-05-01T06:00:00Z')).toBe('2026-05-02T06:00:00.000Z')
    expect(next('0 6 * * *\n0 5 * * *', '2026-05-01T00:00:00Z')).toBe('2026-05-01T05:00:00.000Z')
    expect(next('0 3 * * THU', '2026-05-01T00:00:00Z')).toBe('2026-05-07T03:00:00.000Z')
    expect(next('', '2026-05-01T00:00:00Z')).toBeUndefined()
  })

  it('resolves H to the site minute', () => {
    expect(next('H 4 * * *', '2026-05-01T00:00:00Z', 'UTC', '1')).toBe('2026-05-01T04:39:00.000Z')
    expect(next('H 4 * * *', '2026-05-01T00:00:00Z', 'UTC', '2')).toBe('2026-05-01T04:14:00.000Z')
  })

  it('uses the default time zone when there is no TZ line, and the TZ line over it', () => {
    // 06:00 in Tokyo (UTC+9) is 21:00 UTC the day before.
    expect(next('0 6 * * *', '2026-05-01T00:00:00Z', 'Asia/Tokyo')).toBe('2026-05-01T21:00:00.000Z')
    expect(next('TZ=UTC\n0 6 * * *', '2026-05-01T00:00:00Z', 'Asia/Tokyo')).toBe('2026-05-01T06:00:00.000Z')
  })

  it('follows daylight saving time in New York (EDT UTC-4 in summer, EST UTC-5 in winter)', () => {
    expect(next('TZ=America/New_York\n0 9 * * *', '2026-07-01T00:00:00Z')).toBe('2026-07-01T13:00:00.000Z')
    expect(next('TZ=America/New_York\n0 9 * * *', '2026-01-15T00:00:00Z')).toBe('2026-01-15T14:00:00.000Z')
  })

  it('runs once on the day Berlin springs forward (02:00 CET becomes 03:00 CEST on 2026-03-29)', () => {
    // 03:30 CEST is 01:30 UTC.
    expect(next('TZ=Europe/Berlin\n30 3 * * *', '2026-03-28T12:00:00Z')).toBe('2026-03-29T01:30:00.000Z')
    // 02:30 does not exist that day: the run moves to the first instant after the gap, once.
    expect(next('TZ=Europe/Berlin\n30 2 * * *', '2026-03-29T00:00:00Z')).toBe('2026-03-29T01:30:00.000Z')
    expect(next('TZ=Europe/Berlin\n30 2 * * *', '2026-03-29T01:30:00Z')).toBe('2026-03-30T00:30:00.000Z')
  })

  it('runs once on the day Berlin falls back (03:00 CEST becomes 02:00 CET on 2026-10-25)', () => {
    // 02:30 happens twice (00:30 and 01:30 UTC); the schedule fires once that day.
    const first = next('TZ=Europe/Berlin\n30 2 * * *', '2026-10-25T00:00:00Z')
    expect(first).toBe('2026-10-25T01:30:00.000Z')
    expect(next('TZ=Europe/Berlin\n30 2 * * *', first ?? '')).toBe('2026-10-26T01:30:00.000Z')
    // 03:30 CET is 02:30 UTC.
    expect(next('TZ=Europe/Berlin\n30 3 * * *', '2026-10-25T00:00:00Z')).toBe('2026-10-25T02:30:00.000Z')
  })
})
