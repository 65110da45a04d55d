import { existsSync, mkdtempSync, readdirSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { deleteWhileHeld, expectDeleted, holdTable, leftovers, lockWaits, release, settledAttempts, watchRunLog, withRows } from './site-delete-holds.js'
import { client, createChannel, download, readChannel } from '../helpers/clients.js'
import { feedPaths } from '../helpers/responses.js'
import { eventually } from '../helpers/eventually.js'
import { importFixture } from '../helpers/factories.js'

// Issue 11, bug 3: a run of a site deleted after its export committed, and before the run ended,
// does not leave the export's files behind for a site that no longer exists.

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'site-delete-exports-'))
const t = useTestApp({
  ...HIGH_LIMITS,
  DATA_DIR: dataDir,
  FEED_STORAGE: 'local',
  RUN_CONCURRENCY: '1',
  RUN_POLL_SECONDS: '0.5',
  RUN_HEARTBEAT_SECONDS: '600',
  SCHEDULER_INTERVAL_SECONDS: '0',
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe('deleting a site whose export has just committed', () => {
  it('removes the files the run exported, without an error log or a retry', async () => {
    const c = await client(t)
    const doomed = await importFixture(t, {}, c)
    const next = await importFixture(t, {}, c)
    await withRows(doomed)
    await withRows(next)
    const channel = await createChannel(doomed, {
      format: 'csv',
      filenames: [
        { type: null, filename: 'feed.csv' },
        { type: 'new', filename: 'new.csv' },
      ],
    })
    const errors = vi.spyOn(t.app.log, 'error')
    const runLog = watchRunLog(t)

    // The history entry is written after the export's commit: holding its table stops the run there.
    const holder = await holdTable(t, 'channel_export')
    let released = false
    try {
      const response = await doomed.process({ action: 'all' })
      expect(response.statusCode, response.body).toBe(200)
      const pid = response.json<{ process_id: string }>().process_id
      await eventually(async () => ((await lockWaits(t, 'channel_export')) > 0 ? true : undefined), 'the run to wait for the history table')
      const runDir = path.join(dataDir, 'feeds', channel.id, pid)
      // The export wrote both files: a first export of a CSV channel whose lines are rendered on read
      // writes its full file too. It is served while the run is held.
      expect(readdirSync(runDir).sort()).toEqual(['.gzip', 'feed.csv', 'new.csv'])
      const [full] = feedPaths(await readChannel(doomed, channel.id))
      expect((await download(t, full ?? '', { 'accept-encoding': 'gzip' })).statusCode).toBe(200)
      expect(readdirSync(path.join(runDir, '.gzip')).sort()).toEqual(['feed.csv', 'new.csv'])

      // The delete's cascade waits for the table too; both go on once it is released.
      released = true
      await deleteWhileHeld(t, doomed, holder)
      await expectDeleted(doomed, [pid])

      expect(await settledAttempts(runLog, pid)).toEqual(['started', 'site_deleted'])
      await eventually(async () => !existsSync(runDir), 'the run directory of the deleted site to be removed')
    } finally {
      if (!released) await release(holder)
    }
    expect(await leftovers(t, doomed.site.id)).toMatchObject({ runs: 0, errors: 0 })
    expect(errors).not.toHaveBeenCalled()
    // The account's next run is not held up by the stopped one.
    const after = await next.run('import')
    expect(after.status, after.message).toBe('success')
  })
})
