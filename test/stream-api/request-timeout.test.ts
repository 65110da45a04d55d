import { setTimeout as sleep } from 'node:timers/promises'
import { beforeAll, describe, expect, it } from 'vitest'
import { factories } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { RawConnection, openTransactions, uploadHead, type RawResponse, NO_BACKGROUND_TRANSACTIONS, REQUEST_DEADLINE_MS } from './raw-http.js'
import { eventually } from '../helpers/eventually.js'
import { expectBatch, type ErrorJson } from '../helpers/responses.js'
import { expectNothingStored } from './stored-rows.js'
import { ndjson, streamClient } from '../helpers/clients.js'
import { listenOnFreePort } from '../helpers/listen.js'

const TIMEOUT_MS = REQUEST_DEADLINE_MS
const t = useTestApp({ ...HIGH_LIMITS, ...NO_BACKGROUND_TRANSACTIONS, STREAM_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) })
const given = factories(t)
let port = 0

beforeAll(async () => {
  port = await listenOnFreePort(t.app)
})

/** Sends the head and half the body, lets twice the time limit pass, then sends the rest. */
async function sendWithPause(connection: RawConnection, head: string, body: string): Promise<RawResponse> {
  const half = Math.floor(body.length / 2)
  await connection.write(head)
  await connection.write(body.slice(0, half))
  const answer = connection.response()
  answer.catch(() => {})
  await sleep(2 * TIMEOUT_MS)
  await connection.write(body.slice(half))
  return answer
}

describe('STREAM_REQUEST_TIMEOUT_MS', () => {
  it.each([
    ['chunked', 'application/x-ndjson'],
    ['referenced', 'application/json'],
  ])('answers a slow %s upload with a 503 JSON:API error and stores nothing', async (type, contentType) => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account, type: type })
    const rows = Array.from({ length: 200 }, (_, i) => ({ id: `SKU-${i}`, title: `Product ${i}` }))
    const body = contentType === 'application/json' ? JSON.stringify(rows) : ndjson(rows)
    const connection = await RawConnection.open(port)
    try {
      const response = await sendWithPause(connection, uploadHead(stream.id, c.account.token, Buffer.byteLength(body), contentType), body)
      expect(response.statusCode, response.body).toBe(503)
      expect(response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/)
      const { errors } = JSON.parse(response.body) as { errors: ErrorJson[] }
      expect(errors).toHaveLength(1)
      expect(errors[0]).toMatchObject({ status: '503', title: expect.any(String), detail: expect.any(String) })
    } finally {
      connection.destroy()
    }
    await eventually(async () => (await openTransactions(t)).length === 0, 'the upload transaction to end')
    await expectNothingStored(t, c, stream.id)
  })

  it('answers a slow stream-management request with a 503 JSON:API error and creates nothing', async () => {
    const c = await streamClient(t)
    const body = JSON.stringify({ data: { type: 'stream', attributes: { name: 'Slow stream' } } })
    const head = [
      'POST /streams HTTP/1.1',
      'Host: 127.0.0.1',
      `Authorization: Bearer ${c.account.token}`,
      'Content-Type: application/vnd.api+json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      '',
    ].join('\r\n')
    const connection = await RawConnection.open(port)
    try {
      const response = await sendWithPause(connection, head, body)
      expect(response.statusCode, response.body).toBe(503)
      expect(response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/)
    } finally {
      connection.destroy()
    }
    const list = await c.send('GET', '/streams')
    expect(list.json<{ data: unknown[] }>().data).toEqual([])
  })

  it('lets an upload that finishes in time through', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const batch = expectBatch(await c.upload(stream.id, ndjson([{ id: '1' }, { id: '2' }])))
    expect(batch.attributes.stages.upload).toMatchObject({ status: 'success', successCount: 2 })
    expect((await c.batches(stream.id)).map((b) => b.id)).toEqual([batch.id])
  })
})
