import { describe, expect, it } from 'vitest'
import { runSchedulerTick, type SchedulerTick } from '../../src/jobs/scheduler.js'
import type { Site } from '../../src/db/schema.js'
import { client } from '../helpers/clients.js'
import { factories } from '../helpers/factories.js'
import { useTestApp } from '../helpers/test-app.js'

// A scheduler pass stays bounded (issue 10, finding 2): a schedule stored before the limits existed
// is never evaluated (skipped, with a log line), and due rows are handled in batches until none is
// left. Small limits through the environment; runs are only queued (RUN_CONCURRENCY 0), never run.
const t = useTestApp({ MAX_SCHEDULE_LINES: '5', MAX_SCHEDULE_CHARS: '200', RUN_CONCURRENCY: '0', SCHEDULER_INTERVAL_SECONDS: '0' })
const given = factories(t)

const warnings: Record<string, unknown>[] = []

function tick(at: string): Promise<SchedulerTick> {
  const settings = {
    defaultTimeZone: 'UTC',
    limits: { maxLines: t.config.MAX_SCHEDULE_LINES, maxChars: t.config.MAX_SCHEDULE_CHARS },
    log: { warn: (details: Record<string, unknown>) => warnings.push(details) },
  }
  return runSchedulerTick(t.db, t.app.runWorker.queue, settings, new Date(at))
}

/** A new account with `count` sites in one project, each with `importSchedule` (seeded). */
async function sites(count: number, importSchedule: string) {
  const c = await client(t)
  return { c, sites: await given.sites(count, { account: c.account, import_schedule: importSchedule }) }
}

/** The entries of a tick's list that belong to `sites`. */
const of = <T extends { siteId: string }>(entries: T[], among: Site[]): T[] => entries.filter((e) => among.some((s) => s.id === e.siteId))

/** Writes a schedule text as if it had been saved before the limits existed. */
async function storeDirectly(site: Site, text: string, alsoScheduleRow = false): Promise<void> {
  await t.db.updateTable('site').set({ import_schedule: text }).where('id', '=', site.id).execute()
  if (alsoScheduleRow) await t.db.updateTable('site_schedule').set({ schedule: text }).where('site_id', '=', site.id).execute()
}

const nextRunOf = async (site: Site) =>
  (await t.db.selectFrom('site_schedule').select('next_run_at').where('site_id', '=', site.id).executeTakeFirstOrThrow()).next_run_at

const overLines = Array.from({ length: 6 }, () => '0 6 * * *').join('\n')
const overChars = `0 6 * * ${Array.from({ length: 110 }, () => '1').join(',')}`

describe('stored schedules over the limits', () => {
  it('are skipped with a log line, never fire, and come back once a valid schedule is saved', async () => {
    const { c, sites: [lines, chars] = [] } = await sites(2, '0 6 * * *')
    if (!lines || !chars) throw new Error('no sites')
    expect(overChars.length).toBeGreaterThan(200)
    await storeDirectly(lines, overLines)
    await storeDirectly(chars, overChars)

    const first = await tick('2026-03-01T00:00:00Z')
    expect(of(first.ignored, [lines]).map((e) => e.reason)).toEqual(['at most 5 lines (MAX_SCHEDULE_LINES); this one has 6'])
    expect(of(first.ignored, [chars]).map((e) => e.reason)).toEqual(['over 200 characters (MAX_SCHEDULE_CHARS)'])
    expect(warnings.filter((w) => w.siteId === lines.id || w.siteId === chars.id)).toHaveLength(2)
    expect([await nextRunOf(lines), await nextRunOf(chars)]).toEqual([null, null])

    // Said once, and never fired.
    for (const at of ['2026-03-01T06:00:00Z', '2026-03-02T06:00:00Z']) {
      const later = await tick(at)
      expect([of(later.fired, [lines, chars]), of(later.ignored, [lines, chars])]).toEqual([[], []])
    }
    expect(warnings.filter((w) => w.siteId === lines.id || w.siteId === chars.id)).toHaveLength(2)

    const saved = await c.put(`/sites/${lines.id}`, { import_schedule: '0 7 * * *' })
    expect(saved.statusCode, saved.body).toBe(200)
    await tick('2026-03-03T00:00:00Z')
    expect(of((await tick('2026-03-03T07:00:00Z')).fired, [lines, chars]).map((e) => e.siteId)).toEqual([lines.id])
  })

  it('are not evaluated when their next run was computed before the limits existed', async () => {
    const { sites: [site] = [] } = await sites(1, '0 6 * * *')
    if (!site) throw new Error('no site')
    await tick('2026-04-01T00:00:00Z')
    expect(await nextRunOf(site)).toEqual(new Date('2026-04-01T06:00:00Z'))
    await storeDirectly(site, overChars, true)

    const due = await tick('2026-04-01T06:00:00Z')
    expect(of(due.fired, [site])).toEqual([])
    expect(of(due.ignored, [site]).map((e) => e.reason)).toEqual(['over 200 characters (MAX_SCHEDULE_CHARS)'])
    expect(await nextRunOf(site)).toBeNull()
  })
})

describe('many due schedules', () => {
  it('are all handled by one tick, in batches', async () => {
    const { sites: due } = await sites(130, '0 6 * * *')
    const computed = await tick('2026-05-01T00:00:00Z')
    expect(of(computed.fired, due)).toEqual([])
    for (const site of due) expect(await nextRunOf(site)).toEqual(new Date('2026-05-01T06:00:00Z'))

    const fired = await tick('2026-05-01T06:00:00Z')
    expect(
      of(fired.fired, due)
        .map((e) => e.siteId)
        .sort(),
    ).toEqual(due.map((s) => s.id).sort())
    expect(of(fired.skipped, due)).toEqual([])
  })
})
