import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createDb, type Db } from '../../src/db/database.js'
import { factories } from '../helpers/factories.js'
import { useTestApp } from '../helpers/test-app.js'
import { RawConnection, type RawResponse, serverSettled, uploadHead, waitUntil } from './raw-http.js'
import { expectBatch } from '../helpers/responses.js'
import { storedCounts } from './stored-rows.js'
import { streamClient, type StreamClient } from '../helpers/clients.js'

// One account's slow uploads beside another account's requests (issue 10, finding 3). The app under
// test has a pool of its own with 5 clients, 3 of which uploads may hold (UPLOAD_CONCURRENCY), and
// an account may have 2 uploads in flight (UPLOADS_PER_ACCOUNT). The minimum body rate is off
// here, so that only the slots stand between the slow uploads and everybody else.

const env = {
  LOG_LEVEL: 'silent',
  UPLOADS_PER_ACCOUNT: '2',
  UPLOAD_CONCURRENCY: '3',
  READ_CONCURRENCY: '1',
  DB_POOL_SIZE: '5',
  UPLOAD_MIN_BYTES_PER_SECOND: '0',
  STREAM_REQUEST_TIMEOUT_MS: '20000',
  RATE_LIMIT_PRODUCTS: '1000',
  RATE_LIMIT_OTHER: '1000',
}
const t = useTestApp(env)
const given = factories(t)
let app: FastifyInstance
let appDb: Db
let port = 0

beforeAll(async () => {
  appDb = createDb(t.database.url, 5)
  app = await buildApp({ db: appDb, config: loadConfig(env), clock: t.clock.now, logger: false })
  await app.listen({ port: 0, host: '127.0.0.1' })
  port = (app.server.address() as AddressInfo).port
})

afterAll(async () => {
  await app?.close()
  await appDb?.destroy()
})

/**
 * A stream that has had its first upload (which claims the stream's content type, and with it the
 * stream's row lock while it runs: a second upload would wait for that lock, not for a slot).
 */
async function usedStream(c: StreamClient): Promise<string> {
  const stream = await given.stream({ account: c.account })
  expectBatch(await c.upload(stream.id, '{"id":"seed"}\n'))
  return stream.id
}

/** An upload whose body (1 MB announced) stops after its first line: it holds its slot until closed. */
async function stalledUpload(streamId: string, token: string): Promise<RawConnection> {
  const connection = await RawConnection.open(port)
  await connection.write(uploadHead(streamId, token, 1024 * 1024))
  await connection.write('{"id":"first"}\n')
  return connection
}

async function send(method: string, path: string, headers: Record<string, string>, body = ''): Promise<RawResponse> {
  const connection = await RawConnection.open(port)
  try {
    const head = [
      `${method} ${path} HTTP/1.1`,
      'Host: 127.0.0.1',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      '',
    ]
    await connection.write(head.join('\r\n') + body)
    return await connection.response(15_000)
  } finally {
    connection.destroy()
  }
}

/** Transactions the app under test holds open (uploads that wait for their bodies). */
async function openUploads(): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT count(*) AS n FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL AND query LIKE 'COPY batch_row%'`.execute(t.db)
  return Number(rows[0]?.n ?? 0)
}

describe('slow uploads of one account', () => {
  it('cannot take the pool from another account: its extra uploads get 429, and the other account is served meanwhile', async () => {
    const slow = await streamClient(t, 'slow uploader')
    const other = await streamClient(t, 'other account')
    const slowStream = await usedStream(slow)
    const otherStream = await usedStream(other)
    const stalled: RawConnection[] = []
    try {
      for (let i = 0; i < 2; i++) stalled.push(await stalledUpload(slowStream, slow.account.token))
      await waitUntil('both slow uploads to hold a transaction', async () => (await openUploads()) === 2)
      // More uploads of the same account, however many, are refused at once instead of queueing.
      for (let i = 0; i < 6; i++) {
        const refused = await send(
          'POST',
          `/streams/${slowStream}/products`,
          { Authorization: `Bearer ${slow.account.token}`, 'Content-Type': 'application/x-ndjson' },
          '{"id":"x"}\n',
        )
        expect(refused.statusCode, refused.body).toBe(429)
        expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
        expect(JSON.parse(refused.body)).toMatchObject({
          errors: [{ status: '429', title: 'Too Many Requests', detail: expect.stringMatching(/UPLOADS_PER_ACCOUNT/) as unknown }],
        })
      }
      // The other account's reads and uploads are answered while every slow upload is still open.
      for (let i = 0; i < 5; i++) {
        const projects = await send('GET', '/platform/v2/projects', { 'X-Auth-Token': other.account.xAuthToken })
        expect(projects.statusCode, projects.body).toBe(200)
        const upload = await send(
          'POST',
          `/streams/${otherStream}/products`,
          { Authorization: `Bearer ${other.account.token}`, 'Content-Type': 'application/x-ndjson' },
          `{"id":"o${i}"}\n`,
        )
        expect(upload.statusCode, upload.body).toBe(202)
      }
      expect(await openUploads()).toBe(2)
    } finally {
      for (const connection of stalled) connection.destroy()
    }
    await serverSettled(t)
    // The slow uploads were cut off by their clients: only the first upload of the stream is stored.
    expect(await storedCounts(t, slowStream)).toEqual({ batches: 1, rows: 1, payloadChunks: 0 })
    expect((await other.batches(otherStream)).length).toBe(6)
  })

  it('frees its slot once it ends: the account may upload again', async () => {
    const c = await streamClient(t)
    const stream = { id: await usedStream(c) }
    const stalled = [await stalledUpload(stream.id, c.account.token), await stalledUpload(stream.id, c.account.token)]
    await waitUntil('both slow uploads to hold a transaction', async () => (await openUploads()) === 2)
    const refused = await send(
      'POST',
      `/streams/${stream.id}/products`,
      { Authorization: `Bearer ${c.account.token}`, 'Content-Type': 'application/x-ndjson' },
      '{"id":"x"}\n',
    )
    expect(refused.statusCode).toBe(429)
    for (const connection of stalled) connection.destroy()
    await serverSettled(t)
    const accepted = await send(
      'POST',
      `/streams/${stream.id}/products`,
      { Authorization: `Bearer ${c.account.token}`, 'Content-Type': 'application/x-ndjson' },
      '{"id":"x"}\n',
    )
    expect(accepted.statusCode, accepted.body).toBe(202)
  })
})

describe('GET /healthz', () => {
  it('reports a saturated pool with 503, and ok once it has drained', async () => {
    const healthy = await send('GET', '/healthz', {})
    expect(healthy.statusCode).toBe(200)
    expect(JSON.parse(healthy.body)).toMatchObject({ status: 'ok', pool: { size: 5, waiting: 0 }, uploads: { size: 3 } })
    // Six statements on a pool of five: every client busy and one waiting.
    const sleepers = Array.from({ length: 6 }, () => sql`SELECT pg_sleep(1.5)`.execute(appDb))
    await waitUntil('the pool to be saturated', async () => {
      const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(1.5)' AND state = 'active'`.execute(
        t.db,
      )
      return Number(rows[0]?.n) === 5
    })
    const saturated = await send('GET', '/healthz', {})
    expect(saturated.statusCode).toBe(503)
    expect(JSON.parse(saturated.body)).toMatchObject({ status: 'saturated', database: 'up', pool: { size: 5, busy: 5, waiting: 1 } })
    await Promise.all(sleepers)
    expect((await send('GET', '/healthz', {})).statusCode).toBe(200)
  })
})
