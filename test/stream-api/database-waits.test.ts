import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { factories } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { openTransactions, serverSettled, NO_BACKGROUND_TRANSACTIONS, REQUEST_DEADLINE_MS } from './raw-http.js'
import { eventually } from '../helpers/eventually.js'
import { JSON_BODY, NDJSON, ndjson, streamClient, type Response } from '../helpers/clients.js'
import { expectApiError, expectBatch } from '../helpers/responses.js'
import { expectNothingStored } from './stored-rows.js'

// STREAM_REQUEST_TIMEOUT_MS while a write waits for the database rather than for its body: another
// transaction holds a lock it needs, or the pool has no client left. The answer is the same 503 as
// for a slow body, and nothing is committed, whenever the lock is let go.

const TIMEOUT_MS = REQUEST_DEADLINE_MS
const t = useTestApp({ ...HIGH_LIMITS, ...NO_BACKGROUND_TRANSACTIONS, STREAM_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) })
const given = factories(t)
const TIMEOUT_DETAIL = new RegExp(`longer than ${TIMEOUT_MS} ms`)

/** A transaction of another connection that holds the lock `statement` takes, until `release`. */
async function holdLock(statement: string, parameters: unknown[] = []): Promise<{ release: () => Promise<void> }> {
  const locker = new pg.Client({ connectionString: t.database.url })
  await locker.connect()
  await locker.query('BEGIN')
  await locker.query(statement, parameters)
  return {
    release: async () => {
      await locker.query('COMMIT')
      await locker.end()
    },
  }
}

function expectTimeout(response: Response): void {
  expectApiError(response, 503, TIMEOUT_DETAIL)
}

/** Postgres itself stops the waits at the deadline: only the lock holder's transaction is left. */
async function onlyTheLockHolderLeft(): Promise<void> {
  await eventually(async () => (await openTransactions(t)).length === 1, 'the writes to give up waiting for the lock')
}

describe('the deadline while a write waits for the database', () => {
  it('answers 503 and commits nothing when the stream row is locked', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    // A first upload claims the stream's content type: it needs the row.
    const lock = await holdLock('SELECT id FROM stream WHERE id = $1 FOR UPDATE', [stream.id])
    try {
      expectTimeout(await c.upload(stream.id, ndjson([{ id: '1' }, { id: '2' }])))
      await onlyTheLockHolderLeft()
    } finally {
      await lock.release()
    }
    await serverSettled(t)
    await expectNothingStored(t, c, stream.id)
    const batch = expectBatch(await c.upload(stream.id, ndjson([{ id: '1' }])))
    expect((await c.batches(stream.id)).map((b) => b.id)).toEqual([batch.id])
  })

  it('answers 503 to every write, more than the pool has clients, while the batch table is locked', async () => {
    const c = await streamClient(t)
    const chunked = []
    for (let i = 0; i < 5; i++) chunked.push(await given.stream({ account: c.account }))
    const referenced = await given.stream({ account: c.account, type: 'referenced' })
    const deletes = await given.stream({ account: c.account })
    const lock = await holdLock('LOCK TABLE batch IN EXCLUSIVE MODE')
    try {
      const responses = await Promise.all([
        ...chunked.map((stream) => c.upload(stream.id, ndjson([{ id: 'A' }]))),
        c.upload(referenced.id, '[{"id":"A"}]', JSON_BODY),
        c.send('DELETE', `/streams/${deletes.id}/products/A`),
        c.send('DELETE', `/streams/${deletes.id}/products?all=true`),
        c.send('DELETE', `/streams/${deletes.id}/products`, '{"id":"A"}\n', NDJSON),
      ])
      for (const response of responses) expectTimeout(response)
      await onlyTheLockHolderLeft()
    } finally {
      await lock.release()
    }
    await serverSettled(t)
    for (const stream of [...chunked, referenced, deletes]) await expectNothingStored(t, c, stream.id)
    expectBatch(await c.upload(referenced.id, '[{"id":"A"}]', JSON_BODY))
    expectBatch(await c.send('DELETE', `/streams/${deletes.id}/products/A`))
  })
})
