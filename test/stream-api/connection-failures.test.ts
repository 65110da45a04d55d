import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { createDb, type Db } from '../../src/db/database.js'
import { factories } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { openTransactions, RawConnection, type RawResponse, serverSettled, uploadHead, NO_BACKGROUND_TRANSACTIONS } from './raw-http.js'
import { eventually } from '../helpers/eventually.js'
import { expectBatch, type ErrorJson } from '../helpers/responses.js'
import { expectNothingStored, storedCounts } from './stored-rows.js'
import { streamClient } from '../helpers/clients.js'
import { listenOnFreePort } from '../helpers/listen.js'

// Connections that break: the database's (a backend terminated or cancelled mid-upload) and the
// client's (gone before its body was read). The server must answer or clean up, never crash, leak
// a transaction or a pool client, or log a follow-on error instead of the real one.

const t = useTestApp({ ...HIGH_LIMITS, ...NO_BACKGROUND_TRANSACTIONS })
const given = factories(t)
/**
 * The app under test: its error log is kept (the shared test app logs nothing), and its pool is its
 * own (5 clients, as in tests), so that the test's own queries never wait for it.
 */
let app: FastifyInstance
let appDb: Db
let port = 0
const logged: { msg: string; err?: { type?: string; message?: string; code?: string } }[] = []

beforeAll(async () => {
  const stream = { write: (line: string) => void logged.push(JSON.parse(line) as (typeof logged)[number]) }
  appDb = createDb(t.database.url, 5)
  app = await buildApp({ db: appDb, config: t.config, clock: t.clock.now, logger: { level: 'error', stream } })
  port = await listenOnFreePort(app)
})

afterAll(async () => {
  await app?.close()
  await appDb?.destroy()
})

/** An upload through the app under test (and its pool). */
async function uploadVia(streamId: string, token: string, body: string) {
  const response = await app.inject({
    method: 'POST',
    url: `/streams/${streamId}/products`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
    payload: body,
  })
  return Object.assign(response, { json: <T>() => JSON.parse(response.body) as T })
}

/** About `bytes` of valid NDJSON rows. */
function validLines(bytes: number, from = 0): string {
  const lines: string[] = []
  let size = 0
  for (let i = from; size < bytes; i++) {
    const line = `{"id":"SKU-${i}","title":"Product ${i}","description":"${'d'.repeat(60)}"}\n`
    lines.push(line)
    size += line.length
  }
  return lines.join('')
}

/**
 * Runs `work` while a transaction of the test holds a lock on `batch_row` that the upload's COPY
 * needs: an upload, its body received whole, then waits inside its COPY, where the test can break
 * its database connection.
 */
async function withRowsLocked<T>(work: () => Promise<T>): Promise<T> {
  const locker = new pg.Client({ connectionString: t.database.url })
  await locker.connect()
  try {
    await locker.query('BEGIN')
    await locker.query('LOCK TABLE batch_row IN SHARE MODE')
    return await work()
  } finally {
    await locker.query('COMMIT')
    await locker.end()
  }
}

/** The backend of the server's upload, once it is in its COPY (waiting for the lock of `withRowsLocked`). */
async function copyBackend(): Promise<number> {
  let pid: number | undefined
  await eventually(async () => {
    const { rows } = await sql<{ pid: number }>`
      SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND query LIKE 'COPY batch_row%' AND state = 'active'
    `.execute(t.db)
    pid = rows[0]?.pid
    return pid !== undefined
  }, 'an upload writing rows')
  return pid ?? 0
}

/** A GET over a socket of its own: the server still answers. */
async function rawGet(path: string, token: string): Promise<RawResponse> {
  const connection = await RawConnection.open(port)
  try {
    await connection.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`)
    return await connection.response()
  } finally {
    connection.destroy()
  }
}

function expectServerError(response: RawResponse): ErrorJson {
  expect(response.statusCode, response.body).toBeGreaterThanOrEqual(500)
  expect(response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/)
  const { errors } = JSON.parse(response.body) as { errors: ErrorJson[] }
  expect(errors).toHaveLength(1)
  expect(errors[0]?.status).toBe(String(response.statusCode))
  return errors[0] as ErrorJson
}

function serverConnections(): Promise<number> {
  return new Promise((resolve, reject) => app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))))
}

describe('the database connection of an upload drops', () => {
  it('answers 5xx, keeps serving, stores nothing, and the pool recovers', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const connection = await RawConnection.open(port)
    let response: RawResponse
    try {
      const body = validLines(1024 * 1024)
      response = await withRowsLocked(async () => {
        await connection.write(uploadHead(stream.id, c.account.token, Buffer.byteLength(body)))
        await connection.write(body)
        const pid = await copyBackend()
        await sql`SELECT pg_terminate_backend(${pid})`.execute(t.db)
        // Without a listener for the pg client's 'error', this ends the process (and this test run).
        return connection.response()
      })
    } finally {
      connection.destroy()
    }
    expectServerError(response)
    expect((await rawGet(`/streams/${stream.id}`, c.account.token)).statusCode).toBe(200)
    await serverSettled(t)
    await expectNothingStored(t, c, stream.id)
    const uploads = await Promise.all(Array.from({ length: 6 }, () => uploadVia(stream.id, c.account.token, '{"id":"after"}\n')))
    for (const upload of uploads) expectBatch(upload)
  })

  it('answers 5xx when the backend of a plain query is terminated while it waits for a lock', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const locker = new pg.Client({ connectionString: t.database.url })
    await locker.connect()
    try {
      await locker.query('BEGIN')
      await locker.query('LOCK TABLE stream IN ACCESS EXCLUSIVE MODE')
      const reading = rawGet(`/streams/${stream.id}`, c.account.token)
      let pid: number | undefined
      await eventually(async () => {
        const { rows } = await sql<{ pid: number }>`
          SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%from "stream"%'
        `.execute(t.db)
        pid = rows[0]?.pid
        return pid !== undefined
      }, 'the GET to wait for the lock')
      await sql`SELECT pg_terminate_backend(${pid})`.execute(t.db)
      expectServerError(await reading)
    } finally {
      await locker.query('COMMIT')
      await locker.end()
    }
    expect((await rawGet(`/streams/${stream.id}`, c.account.token)).statusCode).toBe(200)
  })
})

describe('Postgres fails the COPY of an upload', () => {
  it('logs the database error, not a follow-on TypeError of the COPY stream, and stores nothing', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const connection = await RawConnection.open(port)
    const before = logged.length
    let response: RawResponse
    try {
      // Several COPY flushes' worth: after the cancel, the upload writes to the failed COPY again.
      const body = validLines(3 * 1024 * 1024)
      response = await withRowsLocked(async () => {
        await connection.write(uploadHead(stream.id, c.account.token, Buffer.byteLength(body)))
        await connection.write(body)
        const pid = await copyBackend()
        await sql`SELECT pg_cancel_backend(${pid})`.execute(t.db)
        return connection.response(15_000)
      })
    } finally {
      connection.destroy()
    }
    expect(expectServerError(response).status).toBe('500')
    const errors = logged.slice(before).filter((line) => line.err)
    expect(errors.map((line) => line.err?.type)).not.toContain('TypeError')
    expect(errors.map((line) => line.err?.code)).toContain('57014')
    await serverSettled(t)
    await expectNothingStored(t, c, stream.id)
  })
})

describe('clients that go away before their upload reads the body', () => {
  it('leave no transaction and no pool client behind', async () => {
    const c = await streamClient(t)
    // More uploads than the pool has clients (5 in tests), each to a stream of its own.
    const streams = []
    for (let i = 0; i < 8; i++) streams.push(await given.stream({ account: c.account }))
    // The uploads wait for the stream table, so their clients are gone before any body is read.
    const locker = new pg.Client({ connectionString: t.database.url })
    await locker.connect()
    const connections: RawConnection[] = []
    try {
      await locker.query('BEGIN')
      await locker.query('LOCK TABLE stream IN ACCESS EXCLUSIVE MODE')
      for (const [i, stream] of streams.entries()) {
        const connection = await RawConnection.open(port)
        connections.push(connection)
        await connection.write(uploadHead(stream.id, c.account.token, 1024 * 1024))
        // Half of them have sent part of their body, half nothing. (A part larger than the request's
        // buffer would pause the socket, and the server would see the client go only once it reads.)
        if (i % 2 === 0) await connection.write(validLines(1024))
      }
      await eventually(async () => (await openTransactions(t)).some((tx) => tx.waitEventType === 'Lock'), 'uploads waiting for the lock')
      for (const connection of connections) connection.destroy()
      await eventually(async () => (await serverConnections()) === 0, 'the server to see every client go')
    } finally {
      for (const connection of connections) connection.destroy()
      await locker.query('COMMIT')
      await locker.end()
    }
    await serverSettled(t)
    for (const stream of streams) expect(await storedCounts(t, stream.id)).toEqual({ batches: 0, rows: 0, payloadChunks: 0 })
    const uploads = await Promise.all(streams.map((stream) => uploadVia(stream.id, c.account.token, '{"id":"after"}\n')))
    for (const upload of uploads) expectBatch(upload)
  })
})
