import { afterEach, describe, expect, it } from 'vitest'
import { runSchedulerTick, type SchedulerSettings, type SchedulerTick } from '../../src/jobs/scheduler.js'
import type { Site } from '../../src/db/schema.js'
import { client, type Client } from '../helpers/clients.js'
import { factories } from '../helpers/factories.js'
import { expectError } from '../helpers/responses.js'
import { useTestApp } from '../helpers/test-app.js'

// One account's schedules cannot starve another's (issue 10): a line that never fires is refused at
// save and, when stored before that rule, costs nothing to pass over; and a pass cut short by its
// budget serves the accounts in turn. Sites and schedules seeded (factories); ticks with an injected `now`
// (the app's own scheduler is off); runs are only queued (RUN_CONCURRENCY 0), never run.
const t = useTestApp({ RUN_CONCURRENCY: '0', SCHEDULER_INTERVAL_SECONDS: '0' })
const given = factories(t)

const created: Site[] = []

afterEach(async () => {
  // A tick looks at every site of the file's database: later tests must not meet these.
  const ids = created.splice(0).map((s) => s.id)
  if (ids.length > 0) await t.db.updateTable('site').set({ import_schedule: '' }).where('id', 'in', ids).execute()
})

/** The entries of a tick's list that belong to `sites`. */
const of = <T extends { siteId: string }>(entries: T[], sites: Site[]): T[] => entries.filter((e) => sites.some((s) => s.id === e.siteId))

function settings(budgetMs?: number): SchedulerSettings {
  const limits = { maxLines: t.config.MAX_SCHEDULE_LINES, maxChars: t.config.MAX_SCHEDULE_CHARS }
  return { defaultTimeZone: 'UTC', limits, log: { warn: () => {} }, budgetMs }
}

const tick = (at: string, with_ = settings()): Promise<SchedulerTick> => runSchedulerTick(t.db, t.app.runWorker.queue, with_, new Date(at))

async function account(count: number, importSchedule: string): Promise<{ c: Client; sites: Site[] }> {
  const c = await client(t)
  const made = { c, sites: await given.sites(count, { account: c.account, import_schedule: importSchedule }) }
  created.push(...made.sites)
  return made
}

// 31 September never comes: croner searched up to the year 3000 for each such line, ~12 ms a line
// in Pacific/Chatham. Distinct lines, so that nothing could be shared between them.
const neverLines = Array.from({ length: 50 }, (_, i) => `${i} ${i % 24} 31 9 *`)
const never = ['TZ=Pacific/Chatham', ...neverLines.slice(0, 49)].join('\n')

describe('a schedule line that never fires', () => {
  it('is refused at save with a 400 naming the line', async () => {
    const { c, sites: [site] = [] } = await account(1, '0 6 * * *')
    if (!site) throw new Error('no site')
    expectError(await c.put(`/sites/${site.id}`, { import_schedule: never }), 400, /^import_schedule: line 2 "0 0 31 9 \*": fires less than once a year/)
    expectError(
      await c.put(`/sites/${site.id}`, { import_schedule: '0 6 * * *\n0 0 29 2 *' }),
      400,
      /^import_schedule: line 2 "0 0 29 2 \*": fires less than once a year/,
    )
  })

  it('stored before the rule on 100 sites of one account, does not hold back another account: passed over, its due schedule fires', async () => {
    const a = await account(100, '0 6 * * *')
    await t.db
      .updateTable('site')
      .set({ import_schedule: never })
      .where(
        'id',
        'in',
        a.sites.map((s) => s.id),
      )
      .execute()
    const b = await account(1, '* * * * *')

    const computed = await tick('2026-07-01T00:00:00Z')
    expect(of(computed.ignored, a.sites)).toHaveLength(a.sites.length)
    for (const entry of of(computed.ignored, a.sites)) expect(entry.reason).toMatch(/^line 2 "0 0 31 9 \*": fires less than once a year/)
    const due = await tick('2026-07-01T00:01:00Z')
    expect(of(due.fired, b.sites).map((e) => e.siteId)).toEqual(b.sites.map((s) => s.id))
    expect([of(due.fired, a.sites), of(due.ignored, a.sites)]).toEqual([[], []])
  })
})

describe('a pass cut short by its budget', () => {
  // Budget 0: each phase of a tick handles one site and leaves the rest to the next tick.
  it("serves accounts in turn: another account's schedule is computed and fires within two ticks, though 30 sites of one account come first", async () => {
    const a = await account(30, '* * * * *')
    const b = await account(1, '* * * * *')
    const cut = settings(0)

    const computing = [await tick('2026-08-01T00:00:00Z', cut), await tick('2026-08-01T00:00:00Z', cut)]
    const nextRuns = await t.db
      .selectFrom('site_schedule')
      .select('site_id')
      .where(
        'site_id',
        'in',
        [...a.sites, ...b.sites].map((s) => s.id),
      )
      .execute()
    expect(nextRuns.map((r) => r.site_id)).toContain(b.sites[0]?.id)
    expect(nextRuns.length).toBeLessThan(a.sites.length)
    expect(computing.flatMap((c) => c.fired)).toEqual([])
    // A whole pass computes the rest.
    await tick('2026-08-01T00:00:00Z')

    const first = await tick('2026-08-01T00:01:00Z', cut)
    const second = await tick('2026-08-01T00:01:00Z', cut)
    expect([...of(first.fired, b.sites), ...of(second.fired, b.sites)]).toHaveLength(1)
    expect(of(first.fired, a.sites).length).toBeLessThan(a.sites.length)
    // And A's due schedules are not dropped: they fire in the ticks that follow.
    const firedA = new Set([...of(first.fired, a.sites), ...of(second.fired, a.sites)].map((e) => e.siteId))
    for (let i = 0; i < 2 * a.sites.length && firedA.size < a.sites.length; i++) {
      for (const e of of((await tick('2026-08-01T00:01:00Z', cut)).fired, a.sites)) firedA.add(e.siteId)
    }
    expect(firedA.size).toBe(a.sites.length)
  })
})
