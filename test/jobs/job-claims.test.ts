import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import type { Site } from '../../src/db/schema.js'
import { inTransaction } from '../../src/db/transaction.js'
import { admitRun, claimRuns, claimStaleRuns, insertRun, releaseAttempt } from '../../src/runs/run-store.js'
import { runSchedulerTick, type SchedulerSettings } from '../../src/jobs/scheduler.js'
import { factories } from '../helpers/factories.js'
import { useTestApp } from '../helpers/test-app.js'

// The claims of background work are single statements (issue 12): a stale run and a due schedule
// are each taken by one process, however many look at once. Runs are only queued (RUN_CONCURRENCY 0),
// and the app's own scheduler is off.
const t = useTestApp({ RUN_CONCURRENCY: '0', SCHEDULER_INTERVAL_SECONDS: '0' })
const given = factories(t)

const LIMITS = { staleSeconds: 60, timeoutSeconds: 6 * 3600 }

const settings = (): SchedulerSettings => ({ defaultTimeZone: 'UTC', limits: { maxLines: 20, maxChars: 2000 }, log: { warn: () => {} } })

async function staleRun(site: Site): Promise<string> {
  const pid = randomUUID()
  await insertRun(t.db, { pid, accountId: site.account_id, siteId: site.id, action: 'import', targetId: null, trigger: 'api' })
  await t.db
    .updateTable('run')
    .set({
      status: 'running',
      attempt: 1,
      admitted_at: sql<Date>`now()`,
      claimed_at: sql<Date>`now() - interval '1 hour'`,
      heartbeat_at: sql<Date>`now() - interval '1 hour'`,
      started_at: sql<Date>`now()`,
    })
    .where('pid', '=', pid)
    .execute()
  return pid
}

async function queuedRun(site: Site, admitted: boolean): Promise<string> {
  const pid = randomUUID()
  await insertRun(t.db, { pid, accountId: site.account_id, siteId: site.id, action: 'import', targetId: null, trigger: 'api' })
  if (admitted) await admitRun(t.db, pid)
  return pid
}

describe('claimRuns', () => {
  it('gives each admitted run to one claimer, never one waiting for its turn, and again once handed back', async () => {
    const account = await given.account()
    const [a, b, c] = [await given.site({ account }), await given.site({ account }), await given.site({ account })]
    const first = await queuedRun(a!, true)
    const second = await queuedRun(b!, true)
    await queuedRun(c!, false)
    const claimed = await inTransaction(t.db, async (tx) => {
      const one = await claimRuns(tx.db, 1)
      // Another process meanwhile: the held row is skipped, it takes the next one.
      const other = await claimRuns(t.db, 5)
      return [one.map((run) => run.pid), other.map((run) => run.pid)]
    })
    expect(claimed).toEqual([[first], [second]])
    expect(await claimRuns(t.db, 5)).toEqual([])
    // Handed back for its retry: claimed again, as its second attempt.
    expect(await releaseAttempt(t.db, first, 1)).toMatchObject({ pid: first, status: 'running', claimed_at: null })
    expect(await releaseAttempt(t.db, first, 1)).toBeUndefined()
    expect((await claimRuns(t.db, 5)).map((run) => [run.pid, run.attempt, run.status])).toEqual([[first, 2, 'running']])
  })
})

describe('claimStaleRuns', () => {
  it('takes an attempt that ran past RUN_TIMEOUT_SECONDS although its heartbeat is fresh', async () => {
    const account = await given.account()
    const [late, recent] = [await given.site({ account }), await given.site({ account })]
    const latePid = await staleRun(late!)
    const recentPid = await staleRun(recent!)
    await t.db
      .updateTable('run')
      .set({ heartbeat_at: sql<Date>`now()` })
      .where('pid', 'in', [latePid, recentPid])
      .execute()
    await t.db
      .updateTable('run')
      .set({ claimed_at: sql<Date>`now() - interval '7 hours'` })
      .where('pid', '=', latePid)
      .execute()
    expect((await claimStaleRuns(t.db, LIMITS, new Date())).map((run) => run.pid)).toEqual([latePid])
    // Ended, so that the next test's sweeps meet only its own run.
    await t.db.updateTable('run').set({ status: 'failed' }).where('pid', 'in', [latePid, recentPid]).execute()
  })

  it('hands each stale run to one sweeper: one holding it is skipped, one that took it moved its heartbeat on', async () => {
    const account = await given.account()
    const site = await given.site({ account })
    const pid = await staleRun(site)
    const now = new Date()
    await inTransaction(t.db, async (tx) => {
      expect((await claimStaleRuns(tx.db, LIMITS, now)).map((run) => run.pid)).toEqual([pid])
      // Another process meanwhile: the row is held, it is skipped rather than waited for.
      expect(await claimStaleRuns(t.db, LIMITS, now)).toEqual([])
    })
    expect(await claimStaleRuns(t.db, LIMITS, now)).toEqual([])
    const row = await t.db.selectFrom('run').select(['status', 'heartbeat_at']).where('pid', '=', pid).executeTakeFirstOrThrow()
    expect(row).toEqual({ status: 'running', heartbeat_at: now })
  })
})

describe('scheduler ticks of several processes at once', () => {
  it('fire each due site once between them, without a deadlock', async () => {
    const sites: Site[] = []
    for (const name of ['One', 'Two', 'Three']) {
      const account = await given.account(name)
      sites.push(...(await given.sites(8, { account, import_schedule: '* * * * *' })))
    }
    await runSchedulerTick(t.db, t.app.runWorker.queue, settings(), new Date('2026-06-01T00:00:00Z'))
    // Each with a settings object of its own, as in separate processes (its own turn of the accounts).
    const ticks = await Promise.all(
      Array.from({ length: 4 }, () => runSchedulerTick(t.db, t.app.runWorker.queue, settings(), new Date('2026-06-01T00:01:00Z'))),
    )
    const fired = ticks.flatMap((tick) => tick.fired.map((entry) => entry.siteId))
    expect(fired.sort()).toEqual(sites.map((site) => site.id).sort())
    expect(ticks.flatMap((tick) => tick.skipped)).toEqual([])
    const runs = await t.db.selectFrom('run').select('site_id').where('trigger', '=', 'schedule').execute()
    expect(runs.map((run) => run.site_id).sort()).toEqual(sites.map((site) => site.id).sort())
  })
})
