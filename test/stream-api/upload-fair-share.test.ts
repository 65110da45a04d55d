import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createDb, type Db } from '../../src/db/database.js'
import { factories } from '../helpers/factories.js'
import { useTestApp } from '../helpers/test-app.js'
import { bodyBeingReceived, RawConnection, type RawResponse, serverSettled, spoolUsage, uploadHead, NO_BACKGROUND_TRANSACTIONS } from './raw-http.js'
import { eventually } from '../helpers/eventually.js'
import { expectBatch } from '../helpers/responses.js'
import { storedCounts } from './stored-rows.js'
import { streamClient, type StreamClient } from '../helpers/clients.js'
import { listenOnFreePort } from '../helpers/listen.js'

// One account's slow and many uploads beside another account's requests (issue 10, finding 3;
// issue 21, finding 1). The app under test has a pool of its own with 5 clients, 3 of which uploads
// may hold (UPLOAD_CONCURRENCY); an account writes at most 2 uploads at once (UPLOADS_PER_ACCOUNT)
// and may have 3 more waiting for their turn (UPLOAD_QUEUE_PER_ACCOUNT). Bodies are received before
// an upload takes a connection, so a slow body holds none. The minimum body rate is off here, so
// that only the queue stands between the slow uploads and everybody else.

const env = {
  ...NO_BACKGROUND_TRANSACTIONS,
  LOG_LEVEL: 'silent',
  UPLOADS_PER_ACCOUNT: '2',
  UPLOAD_QUEUE_PER_ACCOUNT: '3',
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
  port = await listenOnFreePort(app)
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

/** An upload whose body (1 MB announced) stops after its first line: the server keeps what came until the client goes. */
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

const uploadHeaders = (c: StreamClient) => ({ Authorization: `Bearer ${c.account.token}`, 'Content-Type': 'application/x-ndjson' })

/**
 * Holds the stream's row lock in a transaction of the test's own, so that the stream's uploads,
 * once they have their turn, wait in the database (holding their slots) until `release`.
 */
async function holdStream(streamId: string): Promise<{ release: () => Promise<void> }> {
  const holder = createDb(t.database.url, 1)
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let locked!: () => void
  const isLocked = new Promise<void>((resolve) => (locked = resolve))
  const done = holder.transaction().execute(async (trx) => {
    await sql`SELECT id FROM stream WHERE id = ${streamId} FOR UPDATE`.execute(trx)
    locked()
    await released
  })
  await isLocked
  return {
    release: async () => {
      release()
      await done
      await holder.destroy()
    },
  }
}

/** Uploads of the app under test waiting in the database for a lock (they hold their slots). */
async function uploadsWaitingForLock(): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT count(*) AS n FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`.execute(t.db)
  return Number(rows[0]?.n ?? 0)
}

describe('slow uploads of one account', () => {
  it('hold no database connection while their bodies arrive: the account and every other are served meanwhile', async () => {
    const slow = await streamClient(t, 'slow uploader')
    const other = await streamClient(t, 'other account')
    const slowStream = await usedStream(slow)
    const otherStream = await usedStream(other)
    const stalled: RawConnection[] = []
    try {
      // More stalled bodies than upload slots, and than the pool has connections.
      for (let i = 0; i < 6; i++) stalled.push(await stalledUpload(slowStream, slow.account.token))
      await bodyBeingReceived(t, 6, app)
      for (let i = 0; i < 5; i++) {
        const projects = await send('GET', '/platform/v2/projects', { 'X-Auth-Token': other.account.xAuthToken })
        expect(projects.statusCode, projects.body).toBe(200)
        const upload = await send('POST', `/streams/${otherStream}/products`, uploadHeaders(other), `{"id":"o${i}"}\n`)
        expect(upload.statusCode, upload.body).toBe(202)
        // The slow account's own complete uploads are not refused either.
        const own = await send('POST', `/streams/${slowStream}/products`, uploadHeaders(slow), `{"id":"s${i}"}\n`)
        expect(own.statusCode, own.body).toBe(202)
      }
      expect((await spoolUsage(app)).receiving).toBe(6)
    } finally {
      for (const connection of stalled) connection.destroy()
    }
    await serverSettled(t)
    // The stalled uploads were cut off by their clients: nothing of them is stored.
    expect(await storedCounts(t, slowStream)).toEqual({ batches: 6, rows: 6, payloadChunks: 0 })
    expect((await other.batches(otherStream)).length).toBe(6)
    await eventually(async () => (await spoolUsage(app)).receiving === 0, 'the spool to give the stalled bodies back')
  })
})

describe('a burst of one account', () => {
  it('waits for its turn and is accepted, while another account is served beside it; past the queue 503 with Retry-After', async () => {
    const busy = await streamClient(t, 'burst')
    const other = await streamClient(t, 'beside the burst')
    const busyStream = await usedStream(busy)
    const otherStream = await usedStream(other)
    const lock = await holdStream(busyStream)
    let burst: Promise<RawResponse>[] = []
    try {
      // Two write (and wait for the lock, holding their slots), three wait for the account's turn.
      burst = Array.from({ length: 5 }, (_, i) => send('POST', `/streams/${busyStream}/products`, uploadHeaders(busy), `{"id":"b${i}"}\n`))
      // An upload counts as busy once it has its slot, a moment before its statement reaches the
      // lock: on a loaded machine /healthz showed 2 busy while no statement waited yet.
      await eventually(async () => {
        const health = JSON.parse((await send('GET', '/healthz', {})).body) as { uploads: { busy: number; waiting: number } }
        return health.uploads.busy === 2 && health.uploads.waiting === 3 && (await uploadsWaitingForLock()) === 2
      }, 'two uploads of the burst to write and wait for the lock, three to wait for their turn')
      // The account's queue is full: the next one is refused at once, readable, with Retry-After.
      const refused = await send('POST', `/streams/${busyStream}/products`, uploadHeaders(busy), '{"id":"over"}\n')
      expect(refused.statusCode, refused.body).toBe(503)
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
      expect(JSON.parse(refused.body)).toMatchObject({ errors: [{ status: '503', detail: expect.stringMatching(/UPLOAD_QUEUE_PER_ACCOUNT/) as unknown }] })
      // The other account takes the free slot at once, while the burst still waits.
      const beside = await send('POST', `/streams/${otherStream}/products`, uploadHeaders(other), '{"id":"beside"}\n')
      expect(beside.statusCode, beside.body).toBe(202)
    } finally {
      await lock.release()
    }
    // Once the lock is gone, the whole burst is written: every upload accepted, none lost.
    const answers = await Promise.all(burst)
    expect(answers.map((answer) => answer.statusCode)).toEqual([202, 202, 202, 202, 202])
    expect(await storedCounts(t, busyStream)).toEqual({ batches: 6, rows: 6, payloadChunks: 0 })
  })
})

describe('GET /healthz', () => {
  it('reports a saturated pool with 503, and ok once it has drained', async () => {
    const healthy = await send('GET', '/healthz', {})
    expect(healthy.statusCode).toBe(200)
    expect(JSON.parse(healthy.body)).toMatchObject({ status: 'ok', pool: { size: 5, waiting: 0 }, uploads: { size: 3 } })
    // Six statements on a pool of five: every client busy and one waiting.
    const sleepers = Array.from({ length: 6 }, () => sql`SELECT pg_sleep(1.5)`.execute(appDb))
    await eventually(async () => {
      const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(1.5)' AND state = 'active'`.execute(
        t.db,
      )
      return Number(rows[0]?.n) === 5
    }, 'the pool to be saturated')
    const saturated = await send('GET', '/healthz', {})
    expect(saturated.statusCode).toBe(503)
    expect(JSON.parse(saturated.body)).toMatchObject({ status: 'saturated', database: 'up', pool: { size: 5, busy: 5, waiting: 1 } })
    await Promise.all(sleepers)
    expect((await send('GET', '/healthz', {})).statusCode).toBe(200)
  })
})
