import { mkdtempSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newFeedToken } from '../../src/feeds/feed-urls.js'
import { createChannel, readChannel } from '../helpers/clients.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { feedPaths } from '../helpers/responses.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'

// The feed route over the local storage (FEED_STORAGE=local: the file and its gzip twin on disk), as
// an export leaves it: which representation a client's Accept-Encoding gets, the validators of each,
// conditional requests in their several spellings, and what a missing file answers.
// test/feeds/feed-serving.test.ts covers ranges, HEAD and 416 in depth over the Postgres storage.

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'feed-routes-'))
const t = useTestApp({ ...HIGH_LIMITS, DATA_DIR: dataDir, FEED_STORAGE: 'local', RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

const ROWS = Array.from({ length: 300 }, (_, i) => ({ id: `SKU-${String(i).padStart(4, '0')}`, title: `Product ${i}, "ünï"`, price: String(i / 4) }))

let f: ImportFixture
let url = ''
let otherUrl = ''
let channelId = ''

const get = (headers: Record<string, string> = {}, at = url) => t.app.inject({ method: 'GET', url: at, headers })

beforeAll(async () => {
  f = await importFixture(t)
  const stream = await f.createStream()
  await f.attach(stream)
  await f.upload(stream, ROWS)
  const channel = await createChannel(f, { format: 'csv' })
  const other = await createChannel(f, { format: 'csv', name: 'Other', export_name: 'other-feed' })
  const run = await f.run('all')
  expect(run.status, run.message).toBe('success')
  channelId = channel.id
  url = feedPaths(await readChannel(f, channel.id))[0] ?? ''
  otherUrl = feedPaths(await readChannel(f, other.id))[0] ?? ''
  expect(url && otherUrl && url !== otherUrl).toBeTruthy()
})

afterAll(() => fs.rm(dataDir, { recursive: true, force: true }))

describe('GET /feeds/:token/:filename over the local storage', () => {
  it('serves the file as exported, with strong validators, no caching without revalidation, and no sniffing', async () => {
    const response = await get()
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/csv/)
    expect(response.headers['content-encoding']).toBeUndefined()
    expect(response.headers['content-length']).toBe(String(response.rawPayload.length))
    expect(response.headers.etag).toMatch(/^"[^"]+"$/)
    expect(new Date(String(response.headers['last-modified'])).toUTCString()).toBe(response.headers['last-modified'])
    expect(response.headers['cache-control']).toBe('no-cache')
    expect(response.headers.vary).toBe('Accept-Encoding')
    expect(response.headers['x-content-type-options']).toBe('nosniff')
    expect(response.headers['accept-ranges']).toBe('bytes')
    expect(response.body.split('\n').filter(Boolean)).toHaveLength(ROWS.length + 1)
  })

  it('sends the stored gzip file to every Accept-Encoding that takes gzip, and the plain file to every other', async () => {
    const plain = await get()
    const gzipTag = String(plain.headers.etag).replace(/"$/, '-gzip"')
    for (const accept of ['gzip', 'br;q=1, gzip;q=0.8', 'x-gzip', '*', 'identity, *;q=0.5', 'GZIP;Q=1']) {
      const response = await get({ 'accept-encoding': accept })
      expect(response.headers['content-encoding'], accept).toBe('gzip')
      expect(response.headers.etag, accept).toBe(gzipTag)
      expect(response.headers['content-length'], accept).toBe(String(response.rawPayload.length))
      expect(response.headers['accept-ranges'], accept).toBe('bytes')
      expect(gunzipSync(response.rawPayload).equals(plain.rawPayload), accept).toBe(true)
    }
    for (const accept of ['', 'identity', 'br', 'gzip;q=0', 'br, gzip;q=0, *', '*;q=0']) {
      const response = await get({ 'accept-encoding': accept })
      expect(response.headers['content-encoding'], accept).toBeUndefined()
      expect(response.headers.etag, accept).toBe(plain.headers.etag)
      expect(response.rawPayload.equals(plain.rawPayload), accept).toBe(true)
    }
  })

  it('answers a byte range of the representation served, from either stored file', async () => {
    const plain = (await get()).rawPayload
    const gzipped = (await get({ 'accept-encoding': 'gzip' })).rawPayload
    for (const [headers, whole] of [
      [{}, plain],
      [{ 'accept-encoding': 'gzip' }, gzipped],
    ] as const) {
      const response = await get({ ...headers, range: 'bytes=10-29' })
      expect(response.statusCode).toBe(206)
      expect(response.headers['content-range']).toBe(`bytes 10-29/${whole.length}`)
      expect(response.rawPayload.equals(whole.subarray(10, 30))).toBe(true)
    }
  })

  it('answers 304 to If-None-Match in any spelling that names the file, and to If-Modified-Since not before it', async () => {
    const plain = await get()
    const tag = String(plain.headers.etag)
    const gzipTag = tag.replace(/"$/, '-gzip"')
    // The plain file's tag stands for the file in either representation; the gzip tag for its gzip file only.
    const asked = [
      ...[tag, `W/${tag}`, `"other", ${tag}`, '*'].flatMap((match) => [
        [match, ''],
        [match, 'gzip'],
      ]),
      [gzipTag, 'gzip'],
      [`W/${gzipTag}`, 'gzip'],
    ]
    for (const [match = '', accept = ''] of asked) {
      const response = await get({ 'if-none-match': match, 'accept-encoding': accept })
      expect(response.statusCode, `${match} ${accept}`).toBe(304)
      expect(response.rawPayload.length, `${match} ${accept}`).toBe(0)
      expect(response.headers.etag, `${match} ${accept}`).toBe(accept === 'gzip' ? gzipTag : tag)
    }
    expect((await get({ 'if-none-match': '"stale"' })).statusCode).toBe(200)
    expect((await get({ 'if-none-match': gzipTag })).statusCode).toBe(200)
    const written = new Date(String(plain.headers['last-modified']))
    const at = (ms: number) => new Date(written.getTime() + ms).toUTCString()
    expect((await get({ 'if-modified-since': at(0) })).statusCode).toBe(304)
    expect((await get({ 'if-modified-since': at(86_400_000) })).statusCode).toBe(304)
    expect((await get({ 'if-modified-since': at(-1000) })).statusCode).toBe(200)
    expect((await get({ 'if-modified-since': 'not a date' })).statusCode).toBe(200)
    // If-None-Match wins over If-Modified-Since.
    expect((await get({ 'if-modified-since': at(86_400_000), 'if-none-match': '"stale"' })).statusCode).toBe(200)
  })

  it('writes a lost gzip file again and serves it, never the plain file compressed per download', async () => {
    const gzipped = await get({ 'accept-encoding': 'gzip' })
    // Where the local storage keeps the gzip twin (DATA_DIR/feeds/<key>, .gzip/<name> beside it): the
    // one thing of this file read outside the public interface.
    const rows = await t.db.selectFrom('feed_file').select('storage_key').where('channel_id', '=', channelId).execute()
    const key = rows.find((row) => url.endsWith(`/${encodeURIComponent(path.basename(row.storage_key))}`))?.storage_key ?? ''
    const plainFile = path.join(dataDir, 'feeds', key)
    await fs.rm(path.join(path.dirname(plainFile), '.gzip', path.basename(plainFile)))
    const again = await get({ 'accept-encoding': 'gzip' })
    expect(again.statusCode).toBe(200)
    expect(again.headers.etag).toBe(gzipped.headers.etag)
    expect(again.headers['accept-ranges']).toBe('bytes')
    expect(again.headers['content-length']).toBe(String(again.rawPayload.length))
    expect(gunzipSync(again.rawPayload).equals((await get()).rawPayload)).toBe(true)
  })

  it('answers 404 in the platform body for an unknown token, an unknown file, and a file of another channel', async () => {
    const token = url.split('/')[2] ?? ''
    const otherFile = otherUrl.split('/')[3] ?? ''
    for (const at of [url.replace(token, newFeedToken()), `/feeds/${token}/nope.csv`, `/feeds/${token}/${otherFile}`]) {
      for (const accept of ['', 'gzip']) {
        const response = await get({ 'accept-encoding': accept }, at)
        expect(response.statusCode, `${at} ${accept}`).toBe(404)
        expect(response.json(), `${at} ${accept}`).toEqual({ success: false, message: expect.any(String) })
      }
    }
  })
})

describe('feed tokens', () => {
  it('are 192 random bits in base64url', () => {
    const tokens = new Set(Array.from({ length: 100 }, newFeedToken))
    expect(tokens.size).toBe(100)
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/)
  })
})
