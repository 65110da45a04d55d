import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { hashedMinute } from '../../src/sites/site-schedule.js'
import { runSchedulerTick, type SchedulerTick } from '../../src/jobs/scheduler.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'

// Site schedules (docs/interface.md "Schedule format", docs/design.md 5.5 and 5.7) fired by runSchedulerTick with an
// injected `now`; the app's own scheduler is off (SCHEDULER_INTERVAL_SECONDS 0). A tick looks at every
// site of this file's database, so each test reads only its own sites' entries of a tick and empties
// its schedules afterwards. Fired runs execute in the real worker and are awaited in the test.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

const scheduled: ImportFixture[] = []

afterEach(async () => {
  for (const f of scheduled.splice(0)) {
    const response = await f.platform('PUT', `/sites/${f.site.id}`, { import_schedule: '' })
    expect(response.statusCode, response.body).toBe(200)
  }
})

/** A site whose import succeeds (one main stream with two products), with the given schedule. */
async function scheduledSite(importSchedule: string, siteBody: Record<string, unknown> = {}): Promise<ImportFixture> {
  const f = await importFixture(t, { import_schedule: importSchedule, ...siteBody })
  scheduled.push(f)
  expect(f.site.import_schedule).toBe(importSchedule)
  const stream = await f.createStream()
  await f.attach(stream)
  const upload = await f.upload(stream, [
    { id: 'A', title: 'Shirt' },
    { id: 'B', title: 'Shoe' },
  ])
  expect(upload.statusCode, upload.body).toBe(202)
  return f
}

function tick(at: string, defaultTimeZone = 'UTC'): Promise<SchedulerTick> {
  const limits = { maxLines: t.config.MAX_SCHEDULE_LINES, maxChars: t.config.MAX_SCHEDULE_CHARS }
  return runSchedulerTick(t.db, t.app.runWorker.queue, { defaultTimeZone, limits, log: { warn: () => {} } }, new Date(at))
}

/** The pids this tick fired for the site. */
function firedFor(result: SchedulerTick, f: ImportFixture): string[] {
  return result.fired.filter((entry) => entry.siteId === f.site.id).map((entry) => entry.pid)
}

function skippedFor(result: SchedulerTick, f: ImportFixture): string[] {
  return result.skipped.filter((entry) => entry.siteId === f.site.id).map((entry) => entry.reason)
}

async function runsOf(f: ImportFixture) {
  return t.db.selectFrom('run').selectAll().where('site_id', '=', f.site.id).orderBy('created_at').execute()
}

/** Fires exactly one run of the site at `at` and waits until it ended with success. */
async function expectFiresOnce(f: ImportFixture, at: string, action: 'all' | 'import' = 'all'): Promise<string> {
  const result = await tick(at)
  const fired = firedFor(result, f)
  expect(fired, `tick at ${at}`).toHaveLength(1)
  expect(skippedFor(result, f)).toEqual([])
  const pid = fired[0] ?? ''
  const run = (await runsOf(f)).find((row) => row.pid === pid)
  expect(run).toMatchObject({ action, trigger: 'schedule', target_id: null })
  const ended = await f.waitFor(pid)
  expect(ended.status, ended.message).toBe('success')
  return pid
}

async function expectNothingAt(f: ImportFixture, at: string): Promise<void> {
  const before = (await runsOf(f)).length
  const result = await tick(at)
  expect(firedFor(result, f), `tick at ${at}`).toEqual([])
  expect(skippedFor(result, f), `tick at ${at}`).toEqual([])
  expect((await runsOf(f)).length).toBe(before)
}

describe('a due schedule fires once', () => {
  it('the first tick only computes the next run; a tick before it fires nothing, at it fires `all` once', async () => {
    const f = await scheduledSite('30 6 * * *')
    await expectNothingAt(f, '2026-01-15T06:00:00Z')
    await expectNothingAt(f, '2026-01-15T06:29:59Z')
    const pid = await expectFiresOnce(f, '2026-01-15T06:30:00Z')
    // The same instant again, and later that day: already fired.
    await expectNothingAt(f, '2026-01-15T06:30:00Z')
    await expectNothingAt(f, '2026-01-15T23:59:59Z')

    // The run is a full `all`: imported, then nothing to export.
    const status = await f.platform('GET', `/sites/${f.site.id}/status/${pid}`)
    expect(status.json<{ message: string }>().message).toMatch(/Imported 2 products.*Nothing to export/)
    expect((await f.errors(pid)).map((e) => [e.error, e.type])).toEqual([['2001', 'Info']])
    expect((await f.stage()).rows.map((row) => row.id)).toEqual(['A', 'B'])

    // A tick after the next run time (the scheduler was late) fires it once.
    await expectFiresOnce(f, '2026-01-16T07:10:00Z')
    await expectNothingAt(f, '2026-01-16T07:10:00Z')
    await expectNothingAt(f, '2026-01-17T06:29:00Z')
    expect((await runsOf(f)).map((run) => [run.action, run.trigger, run.status])).toEqual([
      ['all', 'schedule', 'success'],
      ['all', 'schedule', 'success'],
    ])
  })

  it('does not fire on the first tick even when the cron matches every minute', async () => {
    const f = await scheduledSite('* * * * *')
    await expectNothingAt(f, '2026-02-10T10:00:30Z')
    await expectNothingAt(f, '2026-02-10T10:00:59Z')
    await expectFiresOnce(f, '2026-02-10T10:01:00Z')
    await expectNothingAt(f, '2026-02-10T10:01:30Z')
  })

  it('fires the earliest of several cron lines', async () => {
    const f = await scheduledSite('0 18 * * *\n15 9 * * *')
    await expectNothingAt(f, '2026-02-11T00:00:00Z')
    await expectNothingAt(f, '2026-02-11T09:14:00Z')
    await expectFiresOnce(f, '2026-02-11T09:15:00Z')
    await expectNothingAt(f, '2026-02-11T17:59:00Z')
    await expectFiresOnce(f, '2026-02-11T18:00:00Z')
  })
})

describe('H and time zones', () => {
  it("H in the minute field is the site's hashedMinute", async () => {
    const f = await scheduledSite('H 3 * * *')
    const minute = hashedMinute(f.site.id)
    const at = `2026-02-01T03:${String(minute).padStart(2, '0')}:00Z`
    await expectNothingAt(f, '2026-02-01T00:00:00Z')
    await expectNothingAt(f, new Date(new Date(at).getTime() - 1000).toISOString())
    await expectFiresOnce(f, at)
    await expectNothingAt(f, '2026-02-01T03:59:59Z')
  })

  it('H stands for the same minute every hour, per site', async () => {
    const f = await scheduledSite('H * * * *')
    const minute = String(hashedMinute(f.site.id)).padStart(2, '0')
    await expectNothingAt(f, '2026-02-02T10:00:00Z')
    if (minute !== '00') await expectNothingAt(f, new Date(Date.parse(`2026-02-02T10:${minute}:00Z`) - 1000).toISOString())
    await expectFiresOnce(f, `2026-02-02T10:${minute}:00Z`)
    await expectNothingAt(f, new Date(Date.parse(`2026-02-02T11:${minute}:00Z`) - 1000).toISOString())
    await expectFiresOnce(f, `2026-02-02T11:${minute}:00Z`)
  })

  it.each([
    ['winter (CET)', '2026-01-10', '05:00'],
    ['summer (CEST)', '2026-07-10', '04:00'],
  ])('TZ=Europe/Berlin with 0 6 * * * fires at 06:00 Berlin time in %s', async (_season, day, utc) => {
    const f = await scheduledSite('TZ=Europe/Berlin\n0 6 * * *')
    await expectNothingAt(f, `${day}T00:00:00Z`)
    await expectNothingAt(f, new Date(Date.parse(`${day}T${utc}:00Z`) - 1000).toISOString())
    await expectFiresOnce(f, `${day}T${utc}:00Z`)
    await expectNothingAt(f, `${day}T06:00:00Z`)
  })

  it('a schedule without a TZ line uses the default time zone', async () => {
    const f = await scheduledSite('0 6 * * *')
    const inNewYork = async (at: string) => {
      const result = await tick(at, 'America/New_York')
      return { fired: firedFor(result, f), skipped: skippedFor(result, f) }
    }
    expect(await inNewYork('2026-01-20T00:00:00Z')).toEqual({ fired: [], skipped: [] })
    expect(await inNewYork('2026-01-20T06:00:00Z')).toEqual({ fired: [], skipped: [] })
    expect(await inNewYork('2026-01-20T10:59:59Z')).toEqual({ fired: [], skipped: [] })
    const due = await inNewYork('2026-01-20T11:00:00Z')
    expect(due.fired).toHaveLength(1)
    expect((await f.waitFor(due.fired[0] ?? '')).status).toBe('success')
  })
})

describe('site status', () => {
  it('a paused_upload site runs `import` on its schedule', async () => {
    const f = await scheduledSite('0 6 * * *', { status: 'paused_upload' })
    await expectNothingAt(f, '2026-03-01T00:00:00Z')
    const pid = await expectFiresOnce(f, '2026-03-01T06:00:00Z', 'import')
    expect(await f.errors(pid)).toEqual([])
    expect((await f.stage()).rows.map((row) => row.id)).toEqual(['A', 'B'])
  })

  it('a disabled site runs nothing on its schedule', async () => {
    const f = await scheduledSite('0 6 * * *')
    const disable = await f.platform('PUT', `/sites/${f.site.id}`, { status: 'disabled' })
    expect(disable.statusCode, disable.body).toBe(200)
    await expectNothingAt(f, '2026-03-02T00:00:00Z')
    await expectNothingAt(f, '2026-03-02T06:00:00Z')
    await expectNothingAt(f, '2026-03-03T06:00:00Z')
    expect(await runsOf(f)).toEqual([])

    // Active again: the schedule fires at its next time.
    const enable = await f.platform('PUT', `/sites/${f.site.id}`, { status: 'active' })
    expect(enable.statusCode, enable.body).toBe(200)
    await expectNothingAt(f, '2026-03-03T12:00:00Z')
    await expectFiresOnce(f, '2026-03-04T06:00:00Z')
  })
})

describe('editing a schedule', () => {
  it('a later time set through PUT takes effect at the next tick: the old time does not fire, the new one does', async () => {
    const f = await scheduledSite('0 6 * * *')
    await expectNothingAt(f, '2026-04-01T00:00:00Z')
    const edit = await f.platform('PUT', `/sites/${f.site.id}`, { import_schedule: '0 8 * * *' })
    expect(edit.statusCode, edit.body).toBe(200)
    await expectNothingAt(f, '2026-04-01T06:00:00Z')
    await expectNothingAt(f, '2026-04-01T07:59:59Z')
    await expectFiresOnce(f, '2026-04-01T08:00:00Z')
  })

  it('an earlier time set through PUT fires at the new time and not at the old one', async () => {
    const f = await scheduledSite('0 6 * * *')
    await expectNothingAt(f, '2026-04-02T00:00:00Z')
    const edit = await f.platform('PUT', `/sites/${f.site.id}`, { import_schedule: 'TZ=UTC\n0 5 * * *' })
    expect(edit.statusCode, edit.body).toBe(200)
    await expectNothingAt(f, '2026-04-02T00:01:00Z')
    await expectFiresOnce(f, '2026-04-02T05:00:00Z')
    await expectNothingAt(f, '2026-04-02T06:00:00Z')
  })

  it('an edit between two ticks, after the old run time has passed, does not fire the old schedule', async () => {
    const f = await scheduledSite('0 6 * * *')
    await expectNothingAt(f, '2026-04-03T00:00:00Z')
    // The old next run (06:00) is already due when the next tick comes, but the schedule changed.
    const edit = await f.platform('PUT', `/sites/${f.site.id}`, { import_schedule: '0 9 * * *' })
    expect(edit.statusCode, edit.body).toBe(200)
    await expectNothingAt(f, '2026-04-03T07:00:00Z')
    await expectFiresOnce(f, '2026-04-03T09:00:00Z')
  })

  it('an emptied schedule stops firing', async () => {
    const f = await scheduledSite('0 6 * * *')
    await expectNothingAt(f, '2026-04-04T00:00:00Z')
    const edit = await f.platform('PUT', `/sites/${f.site.id}`, { import_schedule: '' })
    expect(edit.statusCode, edit.body).toBe(200)
    expect(edit.json<{ Sites: { import_schedule: string }[] }>().Sites[0]?.import_schedule).toBe('')
    await expectNothingAt(f, '2026-04-04T06:00:00Z')
    await expectNothingAt(f, '2026-04-05T06:00:00Z')
    await expectNothingAt(f, '2026-05-01T06:00:00Z')
    expect(await runsOf(f)).toEqual([])
  })

  it('a schedule given again after being emptied starts afresh', async () => {
    const f = await scheduledSite('0 6 * * *')
    await expectNothingAt(f, '2026-04-06T00:00:00Z')
    expect((await f.platform('PUT', `/sites/${f.site.id}`, { import_schedule: '' })).statusCode).toBe(200)
    await expectNothingAt(f, '2026-04-06T01:00:00Z')
    expect((await f.platform('PUT', `/sites/${f.site.id}`, { import_schedule: '0 6 * * *' })).statusCode).toBe(200)
    await expectNothingAt(f, '2026-04-06T02:00:00Z')
    await expectFiresOnce(f, '2026-04-06T06:00:00Z')
  })

  it('an update that leaves import_schedule out or null keeps the schedule', async () => {
    const f = await scheduledSite('0 6 * * *')
    await expectNothingAt(f, '2026-04-07T00:00:00Z')
    expect((await f.platform('PUT', `/sites/${f.site.id}`, { title: `${f.site.title} renamed`, import_schedule: null })).statusCode).toBe(200)
    await expectNothingAt(f, '2026-04-07T05:59:00Z')
    await expectFiresOnce(f, '2026-04-07T06:00:00Z')
  })
})

describe('several scheduler processes', () => {
  it('two ticks at the same instant fire each due schedule once', async () => {
    const sites = [await scheduledSite('0 6 * * *'), await scheduledSite('0 6 * * *'), await scheduledSite('0 6 * * *')]
    await Promise.all([tick('2026-05-01T00:00:00Z'), tick('2026-05-01T00:00:00Z')])
    for (const round of ['2026-05-01T06:00:00Z', '2026-05-02T06:00:00Z']) {
      const results = await Promise.all([tick(round), tick(round)])
      for (const f of sites) {
        const fired = results.flatMap((result) => firedFor(result, f))
        expect(fired, `${f.site.id} at ${round}`).toHaveLength(1)
        expect(results.flatMap((result) => skippedFor(result, f))).toEqual([])
        expect((await f.waitFor(fired[0] ?? '')).status).toBe('success')
      }
    }
    for (const f of sites) {
      expect((await runsOf(f)).map((run) => [run.action, run.trigger, run.status])).toEqual([
        ['all', 'schedule', 'success'],
        ['all', 'schedule', 'success'],
      ])
    }
  })

  it('first ticks that race on a new schedule fire nothing, and the next due tick fires once', async () => {
    const f = await scheduledSite('0 6 * * *')
    const first = await Promise.all([tick('2026-05-10T03:00:00Z'), tick('2026-05-10T03:00:00Z'), tick('2026-05-10T03:00:00Z')])
    expect(first.flatMap((result) => firedFor(result, f))).toEqual([])
    const due = await Promise.all([tick('2026-05-10T06:00:00Z'), tick('2026-05-10T06:00:00Z'), tick('2026-05-10T06:00:00Z')])
    const fired = due.flatMap((result) => firedFor(result, f))
    expect(fired).toHaveLength(1)
    expect((await f.waitFor(fired[0] ?? '')).status).toBe('success')
  })
})

describe('a site that already has a run waiting', () => {
  it('skips the due schedule with a reason, without error, and leaves the runs as they were', async () => {
    const f = await scheduledSite('0 6 * * *')
    await expectNothingAt(f, '2026-06-01T00:00:00Z')
    const holder = new pg.Client({ connectionString: t.database.url })
    await holder.connect()
    let pids: string[] = []
    try {
      await holder.query('BEGIN')
      await holder.query('LOCK TABLE stage_product IN ACCESS EXCLUSIVE MODE')
      const running = await f.process({ action: 'import' })
      expect(running.statusCode, running.body).toBe(200)
      const runningPid = running.json<{ process_id: string }>().process_id
      expect((await f.waitFor(runningPid, ['running', 'success', 'failed'])).status).toBe('running')
      const queued = await f.process({ action: 'import' })
      expect(queued.statusCode, queued.body).toBe(200)
      const queuedPid = queued.json<{ process_id: string }>().process_id
      pids = [runningPid, queuedPid]

      const result = await tick('2026-06-01T06:00:00Z')
      expect(firedFor(result, f)).toEqual([])
      const reasons = skippedFor(result, f)
      expect(reasons).toHaveLength(1)
      expect(reasons[0]).toMatch(/already queued/)
      expect((await runsOf(f)).map((run) => [run.pid, run.trigger])).toEqual([
        [runningPid, 'api'],
        [queuedPid, 'api'],
      ])
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined)
      await holder.end()
    }
    for (const pid of pids) expect((await f.waitFor(pid)).status).toBe('success')
    // The skipped time is gone; the schedule fires again at its next time.
    await expectNothingAt(f, '2026-06-01T06:00:30Z')
    await expectFiresOnce(f, '2026-06-02T06:00:00Z')
  })
})
