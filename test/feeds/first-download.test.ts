import { createHash } from 'node:crypto'
import { gunzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { exportedFeed } from '../helpers/exported-feed.js'
import { startDownload } from './paused-download.js'
import { listenOnFreePort } from '../helpers/listen.js'

// The first identity download of a full file after an export is served from the channel stage's
// lines as they are read, and the file is written after it (issue 25). Through real HTTP: a first
// download that reads nothing for a while must neither hold the file back (a gzip download, which
// waits for the stored file, completes meanwhile) nor lose a byte (it continues from the stored
// file once it fell behind).

const t = useTestApp({ ...HIGH_LIMITS, FEED_MAX_BYTES: String(64 * 1024 * 1024), RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })
const GZIP = { 'accept-encoding': 'gzip' }

// About 800 bytes a row of hash text, which gzip cannot shrink much: 40,000 rows are a 32 MB file,
// far more than socket buffers and the 8 MiB a live download may lag behind its writing.
const blob = (i: number, version: number) => Array.from({ length: 12 }, (_, k) => createHash('sha256').update(`${i}/${k}/${version}`).digest('hex')).join('')
const rows = (count: number, version: number) =>
  Array.from({ length: count }, (_, i) => ({ id: `P${String(i).padStart(6, '0')}`, title: `T ${i}`, text: blob(i, version) }))

const exportedSite = (count: number) => exportedFeed(t, { rows: rows(count, 0), format: 'csv' })

describe('the first download of a full file', () => {
  it('is served from the lines, and a download that falls behind gets the rest from the file written meanwhile', async () => {
    const site = await exportedSite(40_000)
    const port = await listenOnFreePort(t.app)

    const slow = await startDownload(port, site.url)
    const alsoSlow = await startDownload(port, site.url)
    try {
      expect(slow.status).toBe(200)
      // A gzip download waits for the stored file: it completes while both first downloads read nothing.
      const gzip = await t.app.inject({ method: 'GET', url: site.url, headers: GZIP })
      expect(gzip.statusCode).toBe(200)
      const file = gunzipSync(gzip.rawPayload)
      expect(file.length).toBeGreaterThan(30_000_000)

      for (const download of [slow, alsoSlow]) {
        const body = await download.finish()
        expect(Number(download.headers['content-length'])).toBe(file.length)
        expect(body.length).toBe(file.length)
        expect(body.equals(file), 'the first download is the file, byte for byte').toBe(true)
        expect(download.headers.etag).toBe(String(gzip.headers.etag).replace(/-gzip"$/, '"'))
      }
      // And the stored file is the same again.
      const again = await t.app.inject({ method: 'GET', url: site.url })
      expect(again.rawPayload.equals(file)).toBe(true)
    } finally {
      slow.destroy()
      alsoSlow.destroy()
    }
  })

  it('serves each version whole after a small change: to a plain first download, to a range first, and to gzip', async () => {
    const site = await exportedSite(3_000)
    const before = await t.app.inject({ method: 'GET', url: site.url })
    expect(before.statusCode).toBe(200)
    for (const [version, first] of [
      [1, 'whole'],
      [2, 'range'],
    ] as const) {
      expect((await site.f.upload(site.stream, rows(30, version))).statusCode).toBe(202)
      await site.exportAll()
      const firstResponse = await t.app.inject({ method: 'GET', url: site.url, headers: first === 'range' ? { range: 'bytes=100-299' } : {} })
      expect(firstResponse.statusCode, `version ${version}`).toBe(first === 'range' ? 206 : 200)
      const whole = await t.app.inject({ method: 'GET', url: site.url })
      expect(whole.statusCode).toBe(200)
      expect(whole.headers['content-length']).toBe(String(whole.rawPayload.length))
      const expected = first === 'range' ? whole.rawPayload.subarray(100, 300) : whole.rawPayload
      expect(firstResponse.rawPayload.equals(expected), `version ${version}: the first response`).toBe(true)
      expect(whole.rawPayload.toString()).toContain(blob(5, version))
      expect(whole.rawPayload.toString()).not.toContain(blob(5, version - 1))
      const gzip = await t.app.inject({ method: 'GET', url: site.url, headers: GZIP })
      expect(gunzipSync(gzip.rawPayload).equals(whole.rawPayload), `version ${version}: gzip`).toBe(true)
    }
  })
})
