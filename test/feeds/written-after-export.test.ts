import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { parse as parseCsv } from 'csv-parse/sync'
import { afterAll, describe, expect, it } from 'vitest'
import type { FeedFileWriter, FeedStorage } from '../../src/feeds/feed-storage.js'
import { LocalFeedStorage } from '../../src/feeds/local-feed-storage.js'
import { runCleanup } from '../../src/jobs/cleanup.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { eventually } from '../helpers/eventually.js'
import { exportedFeed } from '../helpers/exported-feed.js'

// A full file an export records without writing it (after a small update) is written right after
// the export commits, by the process that ran it: neither the run nor the first download waits for
// it. A process that stops while it writes leaves the file recorded as not written: downloads are
// still served the export's rows (from the channel stage), and the cleanup writes the file again.

/** The local storage, with writes that fail while `failing` is set (a process dying mid-file), and a log of what it published. */
class FlakyStorage implements FeedStorage {
  failing = false
  readonly published: string[] = []
  readonly failed: string[] = []
  /** Files being written now. */
  writing = 0
  private readonly inner: LocalFeedStorage

  constructor(dir: string) {
    this.inner = new LocalFeedStorage(dir)
  }

  async create(key: string): Promise<FeedFileWriter> {
    const writer = await this.inner.create(key)
    this.writing++
    const ended = () => this.writing--
    return {
      write: async (chunk) => {
        if (this.failing) {
          this.failed.push(key)
          throw new Error('the process stopped')
        }
        await writer.write(chunk)
      },
      close: () => writer.close().finally(ended),
      publish: async () => {
        await writer.publish()
        this.published.push(key)
      },
      abandon: () => writer.abandon().finally(ended),
    }
  }

  open: FeedStorage['open'] = (key, encoding) => this.inner.open(key, encoding)
  remove: FeedStorage['remove'] = (keys) => this.inner.remove(keys)
  removePrefix: FeedStorage['removePrefix'] = (prefix) => this.inner.removePrefix(prefix)
}

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'written-after-export-'))
const storage = new FlakyStorage(dir)
const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' }, { feedStorage: storage })
afterAll(() => fs.rm(dir, { recursive: true, force: true }))

const row = (i: number, version: number) => ({
  id: `P${String(i).padStart(5, '0')}`,
  title: `Shirt ${i}, "v${version}"`,
  note: i % 7 === 0 ? '' : `line\n${i}`,
})

async function exportedSite(format: 'csv' | 'xml') {
  const feed = await exportedFeed(t, { rows: Array.from({ length: 2000 }, (_, i) => row(i, 0)), format })
  const smallUpdate = async (version: number) => {
    const changed = Array.from({ length: 20 }, (_, i) => row(i * 50, version))
    expect((await feed.f.upload(feed.stream, changed)).statusCode).toBe(202)
    await feed.exportAll()
  }
  return { url: feed.url, smallUpdate }
}

/** What the storage published after the first `before` files. */
const publishedSince = (before: number) => storage.published.slice(before)

describe('a full file recorded by an export', () => {
  it('is written right after the export commits, before anyone downloads it', async () => {
    for (const format of ['csv', 'xml'] as const) {
      const site = await exportedSite(format)
      const before = storage.published.length
      await site.smallUpdate(1)
      // Nothing downloads it: the file reaches the storage all the same.
      await eventually(async () => publishedSince(before).length > 0, `the ${format} file written after the export`)
      const identity = await t.app.inject({ method: 'GET', url: site.url })
      const gzip = await t.app.inject({ method: 'GET', url: site.url, headers: { 'accept-encoding': 'gzip' } })
      expect(identity.statusCode).toBe(200)
      expect(gunzipSync(gzip.rawPayload).equals(identity.rawPayload)).toBe(true)
      expect(identity.body).toContain('v1')
    }
  })

  it('stays served from the channel stage when its writing dies, and the cleanup writes it again', async () => {
    const site = await exportedSite('csv')
    storage.failing = true
    const failedBefore = storage.failed.length
    await site.smallUpdate(2)
    await eventually(async () => storage.failed.length > failedBefore, 'the writing after the export to fail')

    // Every download still gets the export's rows: served from the stage, as a first download is.
    const served = await t.app.inject({ method: 'GET', url: site.url })
    expect(served.statusCode).toBe(200)
    const records = parseCsv(served.body) as string[][]
    expect(records).toHaveLength(2001)
    expect(records.filter((r) => r[1]?.endsWith('"v2"'))).toHaveLength(20)
    expect(Number(served.headers['content-length'])).toBe(served.rawPayload.length)
    // A first download writes the file after it is served, or joins the writing still dying: either
    // dies too, since this storage keeps failing. The file stays recorded as not written.
    const key = storage.failed[failedBefore] ?? ''
    expect(storage.published).not.toContain(key)

    // The cleanup, in a process whose storage works (the same files), writes it: once the dying
    // process has stopped writing (its first download's attempt may still be failing).
    await eventually(async () => storage.writing === 0, 'the failing writes to end')
    const healthy = new FlakyStorage(dir)
    const report = await runCleanup(t.db, { now: new Date(t.clock.now().getTime() + 10 * 60_000), feedStorage: healthy })
    expect(report.recordedFiles).toBe(1)
    expect(healthy.published).toEqual([key])
    // Now stored: the gzip representation is the same file, and a second cleanup has nothing left to write.
    const gzip = await t.app.inject({ method: 'GET', url: site.url, headers: { 'accept-encoding': 'gzip' } })
    expect(gunzipSync(gzip.rawPayload).equals(served.rawPayload)).toBe(true)
    const again = await runCleanup(t.db, { now: new Date(t.clock.now().getTime() + 10 * 60_000), feedStorage: healthy })
    expect(again.recordedFiles).toBe(0)
    storage.failing = false
  })
})
