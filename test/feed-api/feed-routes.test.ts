import { TooManyRequestsError } from '../../src/errors.js'
import { ConnectionSlots } from '../../src/db/connection-slots.js'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { feedRoutes } from '../../src/feed-api/feed-routes.js'
import { feedUrl, newFeedToken } from '../../src/feeds/feed-urls.js'
import { LocalFeedStorage } from '../../src/feeds/local-feed-storage.js'
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js'

let database: TestDatabase
let app: FastifyInstance
let dir: string
const token = newFeedToken()
const inactiveToken = newFeedToken()
const otherToken = newFeedToken()
const content = Buffer.concat([Buffer.from('id,title\n1,"a, b"\n2,ünï\n'), Buffer.from(randomBytes(300_000).toString('hex'))])
const etag = '"0123456789abcdef0123456789abcdef"'
const writtenAt = new Date('2024-05-06T07:08:09.500Z')

beforeAll(async () => {
  database = await createTestDatabase()
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'feed-routes-'))
  const { db } = database
  const account = await db.insertInto('account').values({ name: 'feeds' }).returning('id').executeTakeFirstOrThrow()
  const project = await db.insertInto('project').values({ account_id: account.id, name: 'p' }).returning('id').executeTakeFirstOrThrow()
  const site = await db.insertInto('site').values({ account_id: account.id, project_id: project.id, title: 's' }).returning('id').executeTakeFirstOrThrow()
  const template = await db.insertInto('export_template').values({ account_id: account.id, name: 'google' }).returning('id').executeTakeFirstOrThrow()
  const channel = async () =>
    (
      await db
        .insertInto('channel')
        .values({ account_id: account.id, site_id: site.id, template_id: template.id, name: 'c', format: 'csv', mapping: '[]', filenames: '[]' })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id
  const [main, other] = [await channel(), await channel()]
  await db
    .insertInto('channel_destination')
    .values([
      { account_id: account.id, channel_id: main, kind: 'feed', token },
      { account_id: account.id, channel_id: main, kind: 'feed', token: inactiveToken, active: false },
      { account_id: account.id, channel_id: other, kind: 'feed', token: otherToken },
    ])
    .execute()
  const file = (channelId: string, filename: string, storageKey: string) => ({
    account_id: account.id,
    channel_id: channelId,
    position: 0,
    filename,
    storage_key: storageKey,
    content_type: 'text/csv; charset=utf-8',
    bytes: content.length,
    etag,
    written_at: writtenAt,
  })
  await db
    .insertInto('feed_file')
    .values([
      file(main, 'feed.csv', `${main}/run-1/feed.csv`),
      file(main, 'my feed ü.csv', `${main}/run-1/my feed ü.csv`),
      file(main, 'gone.csv', `${main}/run-1/gone.csv`),
      file(other, 'other.csv', `${other}/run-1/other.csv`),
    ])
    .execute()
  await fs.mkdir(path.join(dir, main, 'run-1'), { recursive: true })
  await fs.writeFile(path.join(dir, main, 'run-1', 'feed.csv'), content)
  await fs.writeFile(path.join(dir, main, 'run-1', 'my feed ü.csv'), content)
  app = Fastify()
  const readSlots = new ConnectionSlots({ total: 2, perAccount: 2, queuePerAccount: 0, refuse: () => new TooManyRequestsError(1) })
  await app.register(feedRoutes, { db, feedStorage: new LocalFeedStorage(dir), readSlots })
})

afterAll(async () => {
  await app?.close()
  await database?.drop()
  await fs.rm(dir, { recursive: true, force: true })
})

const get = (url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') => app.inject({ method, url, headers })

describe('GET /feeds/:token/:filename', () => {
  it('serves the file with its validators', async () => {
    const response = await get(`/feeds/${token}/feed.csv`)
    expect(response.statusCode).toBe(200)
    expect(response.rawPayload.equals(content)).toBe(true)
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(response.headers['content-length']).toBe(String(content.length))
    expect(response.headers.etag).toBe(etag)
    expect(response.headers['last-modified']).toBe('Mon, 06 May 2024 07:08:09 GMT')
    expect(response.headers['cache-control']).toBe('no-cache')
    expect(response.headers.vary).toBe('Accept-Encoding')
    expect(response.headers['content-encoding']).toBeUndefined()
  })

  it('answers HEAD with the headers and no body', async () => {
    const response = await get(`/feeds/${token}/feed.csv`, {}, 'HEAD')
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-length']).toBe(String(content.length))
    expect(response.headers.etag).toBe(etag)
    expect(response.rawPayload.length).toBe(0)
  })

  it('answers 304 when If-None-Match names the current tag', async () => {
    for (const tag of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const response = await get(`/feeds/${token}/feed.csv`, { 'if-none-match': tag })
      expect(response.statusCode, tag).toBe(304)
      expect(response.rawPayload.length).toBe(0)
      expect(response.headers.etag).toBe(etag)
    }
    expect((await get(`/feeds/${token}/feed.csv`, { 'if-none-match': '"stale"' })).statusCode).toBe(200)
  })

  it('answers 304 when not modified since If-Modified-Since, unless If-None-Match says otherwise', async () => {
    const url = `/feeds/${token}/feed.csv`
    expect((await get(url, { 'if-modified-since': 'Mon, 06 May 2024 07:08:09 GMT' })).statusCode).toBe(304)
    expect((await get(url, { 'if-modified-since': 'Tue, 07 May 2024 00:00:00 GMT' })).statusCode).toBe(304)
    expect((await get(url, { 'if-modified-since': 'Mon, 06 May 2024 07:08:08 GMT' })).statusCode).toBe(200)
    expect((await get(url, { 'if-modified-since': 'not a date' })).statusCode).toBe(200)
    expect((await get(url, { 'if-modified-since': 'Tue, 07 May 2024 00:00:00 GMT', 'if-none-match': '"stale"' })).statusCode).toBe(200)
  })

  it('gzips when the client accepts it, with a tag of its own', async () => {
    const response = await get(`/feeds/${token}/feed.csv`, { 'accept-encoding': 'br;q=1, gzip;q=0.8' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-encoding']).toBe('gzip')
    expect(response.headers['content-length']).toBeUndefined()
    expect(response.headers.vary).toBe('Accept-Encoding')
    expect(response.headers.etag).toBe('W/"0123456789abcdef0123456789abcdef-gzip"')
    expect(gunzipSync(response.rawPayload).equals(content)).toBe(true)
    const revalidated = await get(`/feeds/${token}/feed.csv`, { 'accept-encoding': 'gzip', 'if-none-match': String(response.headers.etag) })
    expect(revalidated.statusCode).toBe(304)
  })

  it('sends the file as it is when gzip is not accepted', async () => {
    for (const encoding of ['identity', 'gzip;q=0', 'br', '']) {
      const response = await get(`/feeds/${token}/feed.csv`, { 'accept-encoding': encoding })
      expect(response.headers['content-encoding'], encoding).toBeUndefined()
      expect(response.rawPayload.equals(content)).toBe(true)
    }
  })

  it('serves a filename that needs encoding at the address feedUrl gives', async () => {
    const url = new URL(feedUrl('https://feeds.example/', token, 'my feed ü.csv'))
    expect(url.pathname).toBe(`/feeds/${token}/my%20feed%20%C3%BC.csv`)
    const response = await get(url.pathname)
    expect(response.statusCode).toBe(200)
    expect(response.rawPayload.equals(content)).toBe(true)
  })

  it('answers 404 JSON for an unknown token, an unknown or missing file, and an inactive destination', async () => {
    const cases = [
      `/feeds/${newFeedToken()}/feed.csv`,
      `/feeds/${token}/nope.csv`,
      `/feeds/${token}/gone.csv`,
      `/feeds/${inactiveToken}/feed.csv`,
      `/feeds/${otherToken}/feed.csv`,
      `/feeds/${token}/other.csv`,
    ]
    for (const url of cases) {
      for (const method of ['GET', 'HEAD'] as const) {
        const response = await get(url, {}, method)
        expect(response.statusCode, `${method} ${url}`).toBe(404)
        if (method === 'GET') expect(response.json()).toEqual({ success: false, message: expect.any(String) })
      }
    }
  })
})

describe('feed tokens', () => {
  it('are 192 random bits in base64url', () => {
    const tokens = new Set(Array.from({ length: 100 }, newFeedToken))
    expect(tokens.size).toBe(100)
    for (const t of tokens) expect(t).toMatch(/^[A-Za-z0-9_-]{32}$/)
  })
})
