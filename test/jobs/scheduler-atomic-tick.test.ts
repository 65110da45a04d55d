import { sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { runSchedulerTick, type SchedulerTick } from '../../src/jobs/scheduler.js'
import type { Site } from '../../src/db/schema.js'
import { factories } from '../helpers/factories.js'
import { useTestApp } from '../helpers/test-app.js'

// A scheduler batch is one transaction (issue 12): when queueing one site's run fails with an
// error that is not the site's own refusal (an AppError), the schedules of the batch roll back and so
// do the runs queued before it, so that no site fires twice for one due time. The fault is real
// Postgres: a trigger refuses the run row of one site. Runs are only queued (RUN_CONCURRENCY 0).
const t = useTestApp({ RUN_CONCURRENCY: '0', SCHEDULER_INTERVAL_SECONDS: '0' })
const given = factories(t)

const settings = { defaultTimeZone: 'UTC', limits: { maxLines: 20, maxChars: 2000 }, log: { warn: () => {} } }
const tick = (at: string): Promise<SchedulerTick> => runSchedulerTick(t.db, t.app.runWorker.queue, settings, new Date(at))

async function failRunsOf(site: Site): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS test_failing_site (site_id bigint PRIMARY KEY)`.execute(t.db)
  await sql`
    CREATE OR REPLACE FUNCTION test_fail_run() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM test_failing_site WHERE site_id = NEW.site_id) THEN RAISE EXCEPTION 'injected fault: no run for site %', NEW.site_id; END IF;
      RETURN NEW;
    END $$`.execute(t.db)
  await sql`CREATE OR REPLACE TRIGGER test_fail_run BEFORE INSERT ON run FOR EACH ROW EXECUTE FUNCTION test_fail_run()`.execute(t.db)
  await sql`INSERT INTO test_failing_site VALUES (${site.id})`.execute(t.db)
}

afterEach(async () => {
  await sql`DROP TRIGGER IF EXISTS test_fail_run ON run`.execute(t.db)
})

const runsOf = (site: Site) => t.db.selectFrom('run').select(['pid', 'status', 'trigger']).where('site_id', '=', site.id).execute()

describe('a scheduler tick whose second site fails with an unexpected error', () => {
  it('queues nothing of the batch, and once the fault is gone fires every site exactly once', async () => {
    const account = await given.account()
    const [first, second] = await given.sites(2, { account, import_schedule: '* * * * *' })
    if (!first || !second) throw new Error('no sites')
    // The first tick computes both next runs (00:01); at 00:01 both are due, `first` (lower id) first.
    expect((await tick('2026-05-01T00:00:00Z')).fired).toEqual([])
    await failRunsOf(second)

    await expect(tick('2026-05-01T00:01:00Z')).rejects.toThrow(/injected fault/)
    expect(await runsOf(first)).toEqual([])
    expect(await runsOf(second)).toEqual([])

    // Whatever was queued meanwhile has run and ended, so a second run of the site would be accepted.
    await t.db.updateTable('run').set({ status: 'success', finished_at: new Date() }).where('site_id', 'in', [first.id, second.id]).execute()
    await sql`DROP TRIGGER test_fail_run ON run`.execute(t.db)
    const retried = await tick('2026-05-01T00:01:00Z')
    expect(retried.fired.map((entry) => entry.siteId).sort()).toEqual([first.id, second.id].sort())
    expect(retried.skipped).toEqual([])
    expect((await runsOf(first)).map((run) => run.trigger)).toEqual(['schedule'])
    expect((await runsOf(second)).map((run) => run.trigger)).toEqual(['schedule'])

    // Both schedules moved on: the same due time does not fire again.
    expect((await tick('2026-05-01T00:01:30Z')).fired).toEqual([])
    expect(await runsOf(first)).toHaveLength(1)
  })
})
