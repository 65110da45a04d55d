import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { factories } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { JSON_BODY, NDJSON, streamClient } from '../helpers/clients.js'
import { expectApiError, expectBatch } from '../helpers/responses.js'
import { storedCounts } from './stored-rows.js'

const MAX_UPLOAD_BYTES = 1000
const t = useTestApp({ ...HIGH_LIMITS, MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES) })
const given = factories(t)

/** NDJSON rows of 20 bytes each (`{"id":"r0000001"}` padded), `count` of them. */
function rows(count: number): string {
  return Array.from({ length: count }, (_, i) => `{"id":"r${String(i).padStart(8, '0')}"} \n`).join('')
}

describe('MAX_UPLOAD_BYTES', () => {
  it('accepts a body of exactly the limit', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const body = rows(50)
    expect(Buffer.byteLength(body)).toBe(MAX_UPLOAD_BYTES)
    const batch = expectBatch(await c.upload(stream.id, body))
    expect(batch.attributes.stages.upload).toMatchObject({ status: 'success', successCount: 50 })
  })

  it.each(['chunked', 'referenced'])('answers 413 for a %s body one byte over the limit and stores nothing', async (type) => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account, type: type })
    const body = rows(50) + '\n'
    expect(Buffer.byteLength(body)).toBe(MAX_UPLOAD_BYTES + 1)
    expectApiError(await c.upload(stream.id, body), 413)
    expect(await c.batches(stream.id)).toEqual([])
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 0, rows: 0, payloadChunks: 0 })
  })

  it('answers 413 for a large body', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account, type: 'referenced' })
    const body = JSON.stringify(Array.from({ length: 5000 }, (_, i) => ({ id: String(i) })))
    expectApiError(await c.upload(stream.id, body, JSON_BODY), 413)
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 0, rows: 0, payloadChunks: 0 })
  })

  it.each(['chunked', 'referenced'])('answers 413 for a %s gzip bomb: a small body that expands past the limit', async (type) => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account, type: type })
    const bomb = gzipSync('{"id":"same","padding":"xxxxxxxxxxxxxxxx"}\n'.repeat(4_000), { level: 9 })
    expect(bomb.length).toBeLessThan(MAX_UPLOAD_BYTES)
    expectApiError(await c.upload(stream.id, bomb, { ...NDJSON, 'content-encoding': 'gzip' }), 413)
    expect(await c.batches(stream.id)).toEqual([])
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 0, rows: 0, payloadChunks: 0 })
  })

  it('accepts a gzip body that stays within the limit once decompressed', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const batch = expectBatch(await c.upload(stream.id, gzipSync(rows(50)), { ...NDJSON, 'content-encoding': 'gzip' }))
    expect(batch.attributes.stages.upload).toMatchObject({ status: 'success', successCount: 50 })
  })

  it('leaves the stream usable after a 413', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    expectApiError(await c.upload(stream.id, rows(100)), 413)
    const batch = expectBatch(await c.upload(stream.id, rows(3)))
    expect((await c.batches(stream.id)).map((b) => b.id)).toEqual([batch.id])
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 1, rows: 3, payloadChunks: 0 })
  })

  it('does not apply to stream management bodies', async () => {
    const c = await streamClient(t)
    const response = await c.send(
      'POST',
      '/streams',
      { data: { type: 'stream', attributes: { name: 'n'.repeat(255) } }, pad: 'p'.repeat(2000) },
      { 'content-type': 'application/vnd.api+json' },
    )
    expect(response.statusCode, response.body).toBe(201)
  })
})
