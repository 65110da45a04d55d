import pg from 'pg'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import {
  busySlotAndAccount,
  deleteSite,
  deleteWhileHeld,
  expectDeleted,
  holdStreams,
  holdTable,
  isAdmitted,
  leftovers,
  lockWaits,
  release,
  requestImport,
  settledAttempts,
  watchRunLog,
  withRows,
} from './site-delete-holds.js'
import { eventually } from '../helpers/eventually.js'
import { importFixture } from '../helpers/factories.js'
import { client } from '../helpers/clients.js'

// Issue 11, bug 3: deleting a site while its runs wait or run. The runs go with the site (their
// status answers 404 like the site), a running one stops at its next write to the site without an
// error log or a retry, and the account's turn (RUN_ACCOUNT_CONCURRENCY 1) passes on to its next
// waiting run. One run slot in this process, and a sweep interval (RUN_HEARTBEAT_SECONDS) far
// beyond the tests: every turn seen passing here passed at once, not by the sweep's backstop.

const t = useTestApp({
  ...HIGH_LIMITS,
  RUN_CONCURRENCY: '1',
  RUN_ACCOUNT_CONCURRENCY: '1',
  RUN_POLL_SECONDS: '0.5',
  RUN_HEARTBEAT_SECONDS: '600',
  SCHEDULER_INTERVAL_SECONDS: '0',
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe('deleting a site', () => {
  it('during its run stops the run cleanly and passes the account turn to its next waiting run', async () => {
    const c = await client(t, 'deleting account')
    const doomed = await importFixture(t, {}, c)
    const next = await importFixture(t, {}, c)
    const stream = await withRows(doomed)
    await withRows(next)
    const errors = vi.spyOn(t.app.log, 'error')
    const runLog = watchRunLog(t)

    const holder = await holdStreams(t, [stream])
    let released = false
    try {
      const running = await requestImport(doomed)
      expect(running.message).toBe('Run queued')
      await doomed.waitFor(running.pid, ['running'])
      const behind = await requestImport(doomed)
      expect(behind.message).toMatch(/starts when process/)
      const waiting = await requestImport(next)
      expect(waiting.message).toMatch(/account's other runs/)
      expect(await isAdmitted(t, running.pid)).toBe(true)

      await deleteSite(doomed)
      await expectDeleted(doomed, [running.pid, behind.pid])
      // The deleted run still holds the worker: the account's next run waits until it has stopped.
      expect((await next.waitFor(waiting.pid, ['queued', 'running', 'success', 'failed'])).status).toBe('queued')

      await release(holder)
      released = true
      const ended = await next.waitFor(waiting.pid)
      expect(ended.status, ended.message).toBe('success')
      expect(await settledAttempts(runLog, running.pid)).toEqual(['started', 'site_deleted'])
    } finally {
      if (!released) await release(holder)
    }
    // The import it was building went back: no stage rows, no runs, no site errors left behind.
    expect(await leftovers(t, doomed.site.id)).toEqual({ stage: 0, runs: 0, errors: 0 })
    expect(errors).not.toHaveBeenCalled()
    expect((await next.stage()).rows).toEqual([{ id: 'A', title: 'Shirt' }])
  })

  it('with an admitted run not claimed yet passes its account turn on at once', async () => {
    // Another account's run holds the one run slot, so the deleted site's run is admitted but waits.
    const { busy, doomed, next, holder } = await busySlotAndAccount(t, 'second deleting account')
    const errors = vi.spyOn(t.app.log, 'error')
    const runLog = watchRunLog(t)
    let released = false
    try {
      const blocking = await requestImport(busy)
      await busy.waitFor(blocking.pid, ['running'])
      const admitted = await requestImport(doomed)
      expect(admitted.message).toBe('Run queued')
      const waiting = await requestImport(next)
      expect(waiting.message).toMatch(/account's other runs/)
      expect(await isAdmitted(t, admitted.pid)).toBe(true)

      await deleteSite(doomed)
      await expectDeleted(doomed, [admitted.pid])
      // The delete handed the account's turn on, without the sweep (RUN_HEARTBEAT_SECONDS 600).
      expect(await isAdmitted(t, waiting.pid)).toBe(true)

      await release(holder)
      released = true
      expect((await busy.waitFor(blocking.pid)).status).toBe('success')
      const ended = await next.waitFor(waiting.pid)
      expect(ended.status, ended.message).toBe('success')
      // Gone with its site before it was claimed: it never started.
      expect(runLog(admitted.pid)).toEqual([])
    } finally {
      if (!released) await release(holder)
    }
    expect(errors).not.toHaveBeenCalled()
  })

  it('ends a run without waiting for a waiting run of its account that a delete of its site holds', async () => {
    // The account runs one at a time: its first site's run holds the turn, the second site's waits.
    const c = await client(t, 'ending while deleting')
    const first = await importFixture(t, {}, c)
    const second = await importFixture(t, {}, c)
    const stream = await withRows(first)
    await withRows(second)
    const streams = await holdStreams(t, [stream])
    let streamsHeld = true
    // Stands for a delete of the second site, which holds its run's row until it takes the account's lock.
    const rowHolder = new pg.Client({ connectionString: t.database.url })
    await rowHolder.connect()
    try {
      const running = await requestImport(first)
      await first.waitFor(running.pid, ['running'])
      const waiting = await requestImport(second)
      expect(waiting.message).toMatch(/account's other runs/)
      await rowHolder.query('BEGIN')
      await rowHolder.query('SELECT pid FROM run WHERE pid = $1 FOR UPDATE', [waiting.pid])
      await release(streams)
      streamsHeld = false
      // The first run ends while the waiting run's row is held: its end passes the row over.
      const ended = await first.waitFor(running.pid)
      expect(ended.status, ended.message).toBe('success')
      expect(await isAdmitted(t, waiting.pid)).toBe(false)
      await rowHolder.query('ROLLBACK')
      // The turn it passed over is owed: the sweep hands it on.
      await t.app.runWorker.sweep()
      expect((await second.waitFor(waiting.pid)).status).toBe('success')
    } finally {
      if (streamsHeld) await release(streams)
      await rowHolder.end()
    }
  })

  it('leaves no turn unpassed: the sweep admits a run whose turn nobody handed on', async () => {
    const { busy, doomed, next, holder } = await busySlotAndAccount(t, 'third deleting account')
    let released = false
    try {
      const blocking = await requestImport(busy)
      await busy.waitFor(blocking.pid, ['running'])
      const admitted = await requestImport(doomed)
      const waiting = await requestImport(next)
      // A turn nobody handed on, such as the share an operator raised (RUN_ACCOUNT_CONCURRENCY) and
      // restarted with: the admitted run's row goes without the delete that hands its turn on.
      await t.db.deleteFrom('run').where('pid', '=', admitted.pid).execute()
      // Only the sweep can see that the account has a free turn and a run waiting for it.
      expect(await isAdmitted(t, waiting.pid)).toBe(false)
      await t.app.runWorker.sweep()
      expect(await isAdmitted(t, waiting.pid)).toBe(true)
      expect(admitted.pid).not.toBe(waiting.pid)

      await release(holder)
      released = true
      expect((await next.waitFor(waiting.pid)).status).toBe('success')
    } finally {
      if (!released) await release(holder)
    }
  })

  it('while its run writes the stage waits for that write, then stops the run cleanly', async () => {
    const c = await client(t, 'racing account')
    const doomed = await importFixture(t, {}, c)
    const stream = await withRows(doomed)
    expect((await doomed.run()).status).toBe('success')
    await doomed.upload(stream, [{ id: 'B', title: 'Shoe' }])
    const errors = vi.spyOn(t.app.log, 'error')
    const runLog = watchRunLog(t)

    // The run takes the site's stage row, then waits for the stage table: the delete, which removes
    // that stage row, has to wait for the run's transaction, which writes nothing else of the site.
    const holder = await holdTable(t, 'stage_product')
    let released = false
    try {
      const run = await requestImport(doomed)
      await eventually(async () => ((await lockWaits(t, 'stage_product')) > 0 ? true : undefined), 'the run to wait for the stage')
      released = true
      await deleteWhileHeld(t, doomed, holder)
      await expectDeleted(doomed, [run.pid])
      expect(await settledAttempts(runLog, run.pid)).toEqual(['started', 'site_deleted'])
    } finally {
      if (!released) await release(holder)
    }
    expect(await leftovers(t, doomed.site.id)).toMatchObject({ runs: 0, errors: 0 })
    // The stage rows the run committed before the delete are the hourly cleanup's to remove.
    expect(await t.db.selectFrom('site_purge').select('site_id').where('site_id', '=', doomed.site.id).execute()).toHaveLength(1)
    expect(errors).not.toHaveBeenCalled()
  })
})
