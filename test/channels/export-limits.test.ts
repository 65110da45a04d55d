import { mkdtempSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { factories, importFixture, type ImportFixture } from '../helpers/factories.js'
import { createChannel, download, history, readChannel } from '../helpers/clients.js'
import { feedPaths } from '../helpers/responses.js'

// Exports a tenant's data or configuration cannot be written as: each fails once as a site error
// saying what to change, keeps the previous files, and is neither retried nor logged as an error.

const FEED_MAX_BYTES = 64 * 1024
// A directory of this file's own: the feeds directory is inspected below.
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'export-limits-'))
const t = useTestApp({
  ...HIGH_LIMITS,
  DATA_DIR: dataDir,
  FEED_STORAGE: 'local',
  FEED_MAX_BYTES: String(FEED_MAX_BYTES),
  RUN_POLL_SECONDS: '0.5',
  SCHEDULER_INTERVAL_SECONDS: '0',
})
const given = factories(t)

async function siteWith(rows: object[]): Promise<{ f: ImportFixture; stream: string }> {
  const f = await importFixture(t)
  const stream = await f.createStream()
  await f.attach(stream)
  expect((await f.upload(stream, rows)).statusCode).toBe(202)
  return { f, stream }
}

/** Every file under the channel's directory of the feeds directory, relative to it. */
async function channelFiles(channelId: string): Promise<string[]> {
  const dir = path.join(dataDir, 'feeds', channelId)
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true })
  return entries.filter((entry) => entry.isFile()).map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
}

/** Runs `work` and gives back the error-level log calls made meanwhile (an unexpected failure logs one). */
async function errorLogsOf(work: () => Promise<void>): Promise<unknown[][]> {
  const spy = vi.spyOn(t.app.log, 'error')
  try {
    await work()
    return spy.mock.calls
  } finally {
    spy.mockRestore()
  }
}

describe('FEED_MAX_BYTES', () => {
  it('fails an export whose file would pass it, keeps the previous feed, and leaves nothing partial', async () => {
    const { f, stream } = await siteWith([{ id: 'A', title: 'Shirt' }])
    const channel = await createChannel(f, { format: 'ndjson', filenames: [{ type: null, filename: 'all.ndjson' }] })
    expect((await f.run('all')).status).toBe('success')
    const [feed] = feedPaths(await readChannel(f, channel.id))
    // A gzip download waits for the full file to be written (an identity one is served from the stage, the file written after).
    expect((await download(t, feed ?? '', { 'accept-encoding': 'gzip' })).statusCode).toBe(200)
    const before = await download(t, feed ?? '')
    expect(before.body).toBe('{"id":"A","title":"Shirt"}\n')
    const kept = await channelFiles(channel.id)
    // The file and its gzip representation, stored once by the export.
    expect(kept.map((file) => path.basename(path.dirname(file)) + '/' + path.basename(file)).sort()).toEqual([
      '.gzip/all.ndjson',
      expect.stringMatching(/\/all\.ndjson$/),
    ])

    // Many columns times many rows: the feed would be a hundred times the budget.
    const wide = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`attribute_${i}`, 'x'.repeat(100)]))
    expect(
      (
        await f.upload(
          stream,
          Array.from({ length: 2000 }, (_, i) => ({ id: `P${String(i).padStart(5, '0')}`, ...wide })),
        )
      ).statusCode,
    ).toBe(202)
    let failed = { pid: '', status: '', message: '' }
    const logged = await errorLogsOf(async () => {
      failed = await f.run('all')
    })
    expect(failed.status).toBe('failed')
    const errors = await f.errors(failed.pid)
    expect(errors.map((e) => e.error)).toEqual(['2006', '2005'])
    const tooLarge = errors.find((e) => e.error === '2006')
    expect(tooLarge?.message).toContain('FEED_MAX_BYTES')
    expect(tooLarge?.message).toContain(`${FEED_MAX_BYTES} bytes`)
    expect(tooLarge?.message).toContain('"all.ndjson"')
    expect(JSON.parse(tooLarge?.data ?? '{}')).toMatchObject({ channel_id: channel.id, filename: 'all.ndjson', limit: FEED_MAX_BYTES })
    expect(logged).toEqual([])

    // The previous file is still served, and it is the only file the channel has on disk.
    expect((await download(t, feedPaths(await readChannel(f, channel.id))[0] ?? '')).body).toBe(before.body)
    expect(await channelFiles(channel.id)).toEqual(kept)
    expect((await history(f, channel.id)).map((entry) => entry.process_status)).toEqual(['failed', 'success'])
  })
})

describe('a channel its format cannot carry', () => {
  it('fails an XML channel without mapping over a column that is no XML name once, naming the column', async () => {
    const { f } = await siteWith([{ id: 'zz', 'bad name': 'v' }])
    expect((await f.run('import')).status).toBe('success')
    const channel = await createChannel(f, { format: 'xml' })
    let failed = { pid: '', status: '', message: '' }
    const logged = await errorLogsOf(async () => {
      failed = await f.run('channel', { id: channel.id })
    })
    expect(failed.status).toBe('failed')
    const errors = await f.errors(failed.pid)
    // Not retried: no 9001 or 9002, one error for the channel and the run's summary.
    expect(errors.map((e) => e.error)).toEqual(['2007', '2005'])
    const unwritable = errors.find((e) => e.error === '2007')
    expect(unwritable?.message).toMatch(/"bad name" is not a valid XML element name/)
    expect(unwritable?.message).toMatch(/give it a mapping/)
    expect(JSON.parse(unwritable?.data ?? '{}')).toMatchObject({ channel_id: channel.id, column: 'bad name', format: 'xml' })
    expect(logged).toEqual([])
    expect((await history(f, channel.id)).map((entry) => entry.process_status)).toEqual(['failed'])

    // With a mapping that names the column differently, the same data exports.
    expect(
      (
        await f.platform('PUT', `/sites/${f.site.id}/channels/${channel.id}`, {
          mapping: [
            { column: 'g:id', source: 'id' },
            { column: 'bad_name', source: 'bad name' },
          ],
        })
      ).statusCode,
    ).toBe(200)
    expect((await f.run('channel', { id: channel.id })).status).toBe('success')
    expect((await download(t, feedPaths(await readChannel(f, channel.id))[0] ?? '')).body).toContain('<item><g:id>zz</g:id><bad_name>v</bad_name></item>')
  })

  it('fails a file name too long for the disk once its placeholders are filled in', async () => {
    const { f } = await siteWith([{ id: 'A', title: 'Shirt' }])
    // 252 characters as stored, 420 once each {date} is a date. A save refuses it now (see
    // channel-save-rules.test.ts): only a channel stored before that rule still has it.
    await given.legacyChannel({ account: f.account, site: f.site, format: 'csv', filenames: [{ type: null, filename: '{date}'.repeat(42) }] })
    let failed = { pid: '', status: '', message: '' }
    const logged = await errorLogsOf(async () => {
      failed = await f.run('all')
    })
    expect(failed.status).toBe('failed')
    const errors = await f.errors(failed.pid)
    expect(errors.map((e) => e.error)).toEqual(['2007', '2005'])
    expect(errors.find((e) => e.error === '2007')?.message).toMatch(
      /has 420 bytes once its placeholders are filled in.*shorten the channel's filename template/,
    )
    expect(logged).toEqual([])
  })

  it('writes a file whose name is as long as the file system allows', async () => {
    const { f } = await siteWith([{ id: 'A', title: 'Shirt' }])
    const filename = `${'a'.repeat(251)}.csv`
    const channel = await createChannel(f, { format: 'csv', filenames: [{ type: null, filename }] })
    const run = await f.run('all')
    expect(run.status, run.message).toBe('success')
    const [feed] = feedPaths(await readChannel(f, channel.id))
    expect(feed?.endsWith(`/${filename}`)).toBe(true)
    expect((await download(t, feed ?? '')).body).toBe('id,title\nA,Shirt\n')
  })
})
