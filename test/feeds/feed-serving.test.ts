import { gunzipSync } from 'node:zlib'
import { parse as parseCsv } from 'csv-parse/sync'
import type { LightMyRequestResponse } from 'fastify'
import { beforeAll, describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { createChannel, readChannel } from '../helpers/clients.js'
import { feedPaths } from '../helpers/responses.js'

// Feed files as an exported channel serves them: the gzip representation stored by the export (never
// compressed per download), single byte ranges of either representation, and HEAD.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

const ROWS = Array.from({ length: 400 }, (_, i) => ({ id: `SKU-${String(i).padStart(4, '0')}`, title: `Product ${i}, "quoted"`, price: String(i / 4) }))

let f: ImportFixture
let path = ''

const get = (headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET', url = path) => t.app.inject({ method, url, headers })
const GZIP = { 'accept-encoding': 'gzip, deflate' }

beforeAll(async () => {
  f = await importFixture(t)
  const stream = await f.createStream()
  await f.attach(stream)
  await f.upload(stream, ROWS)
  const channel = await createChannel(f, { format: 'csv' })
  const run = await f.run('all')
  expect(run.status, run.message).toBe('success')
  path = feedPaths(await readChannel(f, channel.id))[0] ?? ''
})

/** The headers a HEAD must repeat from its GET. */
function entityHeaders(response: LightMyRequestResponse) {
  const { etag, 'last-modified': lastModified, 'content-type': type, 'content-encoding': encoding, 'content-length': length, vary } = response.headers
  return { etag, lastModified, type, encoding, length, vary, ranges: response.headers['accept-ranges'], range: response.headers['content-range'] }
}

describe('feed files of an export', () => {
  it('serves gzip clients the compressed file stored by the export: same bytes each time, a length, a strong tag of its own', async () => {
    const plain = await get()
    const first = await get(GZIP)
    const again = await get(GZIP)
    expect(first.statusCode).toBe(200)
    expect(first.headers['content-encoding']).toBe('gzip')
    expect(first.headers['content-length']).toBe(String(first.rawPayload.length))
    expect(first.headers.etag).toBe(String(plain.headers.etag).replace(/"$/, '-gzip"'))
    expect(first.headers.etag).not.toMatch(/^W\//)
    expect(first.headers['accept-ranges']).toBe('bytes')
    expect(again.rawPayload.equals(first.rawPayload)).toBe(true)
    // Decompressed, it is exactly the plain file, which parses to the exported rows.
    expect(gunzipSync(first.rawPayload).equals(plain.rawPayload)).toBe(true)
    expect(parseCsv(plain.body, { columns: true })).toEqual(ROWS)
    // Either tag stands for the current file in a conditional GET.
    for (const tag of [String(first.headers.etag), String(plain.headers.etag)]) expect((await get({ ...GZIP, 'if-none-match': tag })).statusCode).toBe(304)
  })

  it('answers HEAD with the headers of GET and no body, plain and gzip', async () => {
    for (const headers of [{}, GZIP, { range: 'bytes=5-9' }] as Record<string, string>[]) {
      const got = await get(headers)
      const head = await get(headers, 'HEAD')
      expect(head.statusCode).toBe(got.statusCode)
      expect(entityHeaders(head)).toEqual(entityHeaders(got))
      expect(head.rawPayload.length).toBe(0)
    }
  })

  it('answers one byte range with 206 and exactly those bytes of the representation served', async () => {
    const whole = (await get()).rawPayload
    const size = whole.length
    const cases: [string, number, number][] = [
      ['bytes=0-9', 0, 9],
      ['bytes=100-', 100, size - 1],
      ['bytes=-25', size - 25, size - 1],
      [`bytes=${size - 3}-${size + 1000}`, size - 3, size - 1],
      ['bytes=-999999999', 0, size - 1],
    ]
    for (const [range, start, end] of cases) {
      const response = await get({ range })
      expect(response.statusCode, range).toBe(206)
      expect(response.headers['content-range'], range).toBe(`bytes ${start}-${end}/${size}`)
      expect(response.headers['content-length'], range).toBe(String(end - start + 1))
      expect(response.rawPayload.equals(whole.subarray(start, end + 1)), range).toBe(true)
    }
    // A range of the gzip representation is a range of its bytes (RFC 9110: of the selected representation).
    const gzipped = (await get(GZIP)).rawPayload
    const part = await get({ ...GZIP, range: 'bytes=0-99' })
    expect(part.statusCode).toBe(206)
    expect(part.headers['content-encoding']).toBe('gzip')
    expect(part.headers['content-range']).toBe(`bytes 0-99/${gzipped.length}`)
    expect(part.rawPayload.equals(gzipped.subarray(0, 100))).toBe(true)
  })

  it('answers a range outside the file with 416, its size, and a message in the platform body', async () => {
    const size = (await get()).rawPayload.length
    for (const range of [`bytes=${size}-`, `bytes=${size + 10}-${size + 20}`, 'bytes=-0']) {
      const response = await get({ range })
      expect(response.statusCode, range).toBe(416)
      expect(response.headers['content-range'], range).toBe(`bytes */${size}`)
      expect(response.json(), range).toEqual({ success: false, message: expect.stringContaining(String(size)) })
    }
  })

  it('serves the whole file for several ranges, a malformed range, or an If-Range naming another version', async () => {
    const whole = await get()
    const current = String(whole.headers.etag)
    const cases: Record<string, string>[] = [
      { range: 'bytes=0-1,5-6' },
      { range: 'lines=0-1' },
      { range: 'bytes=9-2' },
      { range: 'bytes=0-9', 'if-range': '"another-version"' },
      { range: 'bytes=0-9', 'if-range': `W/${current}` },
      { range: 'bytes=0-9', 'if-range': 'Mon, 01 Jan 2001 00:00:00 GMT' },
    ]
    for (const headers of cases) {
      const response = await get(headers)
      expect(response.statusCode, JSON.stringify(headers)).toBe(200)
      expect(response.rawPayload.equals(whole.rawPayload), JSON.stringify(headers)).toBe(true)
    }
    // An If-Range that names the current file (tag or date) lets the range through.
    expect((await get({ range: 'bytes=0-9', 'if-range': current })).statusCode).toBe(206)
    expect((await get({ range: 'bytes=0-9', 'if-range': String(whole.headers['last-modified']) })).statusCode).toBe(206)
  })
})
