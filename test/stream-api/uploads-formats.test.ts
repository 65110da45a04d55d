import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { factories } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { JSON_BODY, NDJSON, ndjson, streamClient, type Headers } from '../helpers/clients.js'
import { expectApiError, expectBatch } from '../helpers/responses.js'
import { storedCounts, storedRows } from './stored-rows.js'

const t = useTestApp(HIGH_LIMITS)
const given = factories(t)
const GZIP_NDJSON = { ...NDJSON, 'content-encoding': 'gzip' }

/** The payload a referenced batch kept, as received. */
async function storedPayload(batchId: string): Promise<string> {
  const chunks = await t.db.selectFrom('batch_payload').select('chunk').where('batch_id', '=', batchId).orderBy('chunk_no').execute()
  return Buffer.concat(chunks.map((c) => c.chunk)).toString('utf8')
}

describe('referenced streams', () => {
  it('accept an application/json array of objects and keep the payload as received', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account, type: 'referenced' })
    const body = JSON.stringify([
      { id: '1', price: 10.5 },
      { id: '2', nested: { not: 'validated here' } },
    ])
    const batch = expectBatch(await c.upload(stream.id, body, JSON_BODY))
    expect(batch.attributes).toMatchObject({ status: 'uploaded', errorCount: 0, stages: { processing: null } })
    expect(batch.attributes.stages.upload.status).toBe('success')
    expect(await storedPayload(batch.id)).toBe(body)
    expect((await c.batches(stream.id)).map((b) => b.id)).toEqual([batch.id])
  })

  it('accept NDJSON', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account, type: 'referenced' })
    const body = ndjson([{ id: '1' }, { id: '2' }])
    const batch = expectBatch(await c.upload(stream.id, body, NDJSON))
    expect(batch.attributes.status).toBe('uploaded')
    expect(await storedPayload(batch.id)).toBe(body)
  })

  it.each([
    ['an empty body', '', JSON_BODY],
    ['[]', '[]', JSON_BODY],
    ['[{},{}]', '[{},{}]', JSON_BODY],
    ['[ {} , {} ] with blanks', ' [ {} ,\n {} ] \n', JSON_BODY],
    ['NDJSON of empty objects', '{}\n{}\n', NDJSON],
  ])('refuse %s with 422 Empty Payload and store nothing', async (_case, body, headers) => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account, type: 'referenced' })
    const batch = expectBatch(await c.upload(stream.id, body, headers), 422)
    expect(batch.attributes).toMatchObject({ status: 'failed', errorCount: 1 })
    expect(batch.attributes.stages.upload.errors.map((e) => e.message)).toEqual(['Empty Payload'])
    expect(await c.batches(stream.id)).toEqual([])
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 0, rows: 0, payloadChunks: 0 })
  })

  it('refuse other content types with 415 naming the accepted ones', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account, type: 'referenced' })
    const cases: Headers[] = [{ 'content-type': 'text/csv' }, {}]
    for (const headers of cases) {
      const error = expectApiError(await c.upload(stream.id, '[{"id":"1"}]', headers), 415)
      expect(error.detail).toMatch(/application\/json/)
      expect(error.detail).toMatch(/application\/x-ndjson/)
    }
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 0, rows: 0, payloadChunks: 0 })
  })

  it('keep the content type of the first upload: JSON first, then NDJSON is refused with 415', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account, type: 'referenced' })
    expectBatch(await c.upload(stream.id, '[{"id":"1"}]', JSON_BODY))
    expectApiError(await c.upload(stream.id, '{"id":"2"}\n', NDJSON), 415, /application\/json/)
    expectBatch(await c.upload(stream.id, '[{"id":"3"}]', JSON_BODY))
    expect(await c.batches(stream.id)).toHaveLength(2)
  })

  it('keep the content type of the first upload: NDJSON first, then JSON is refused with 415', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account, type: 'referenced' })
    expectBatch(await c.upload(stream.id, '{"id":"1"}\n', NDJSON))
    expectApiError(await c.upload(stream.id, '[{"id":"2"}]', JSON_BODY), 415)
    expect(await c.batches(stream.id)).toHaveLength(1)
  })
})

describe('gzip bodies', () => {
  it('decompresses a gzip NDJSON body and validates its rows', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const rows = Array.from({ length: 500 }, (_, i) => ({ id: `SKU-${i}`, title: `Product ${i}`, price: '9.99' }))
    const body = ndjson(rows) + '{}\n'
    const batch = expectBatch(await c.upload(stream.id, gzipSync(body), GZIP_NDJSON))
    expect(batch.attributes.stages.upload).toMatchObject({ status: 'warning', successCount: 500, errorCount: 1 })
    expect(batch.attributes.stages.upload.errors).toEqual([{ message: 'Empty Product Attributes', occurrences: 1, example: { lineNumber: 501, value: '{}' } }])
    const stored = await storedRows(t, stream.id)
    expect(stored).toHaveLength(500)
    expect(stored[499]).toMatchObject({ line_no: 500, product_id: 'SKU-499' })
    expect(JSON.parse(stored[0]?.data ?? 'null')).toEqual(rows[0])
  })

  it('decompresses a gzip JSON body for a referenced stream', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account, type: 'referenced' })
    const body = JSON.stringify([{ id: '1' }, { id: '2' }])
    const batch = expectBatch(await c.upload(stream.id, gzipSync(body), { ...JSON_BODY, 'content-encoding': 'gzip' }))
    const chunks = await t.db.selectFrom('batch_payload').select('chunk').where('batch_id', '=', batch.id).orderBy('chunk_no').execute()
    expect(Buffer.concat(chunks.map((x) => x.chunk)).toString('utf8')).toBe(body)
  })

  it('decompresses deflate bodies, zlib-wrapped or raw (PHP gzdeflate), labelled deflate or gzip', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const sent: string[] = []
    for (const [name, compress] of [
      ['zlib', deflateSync],
      ['raw', deflateRawSync],
    ] as const) {
      for (const encoding of ['deflate', 'gzip']) {
        const id = `${name}-${encoding}`
        sent.push(id)
        const batch = expectBatch(await c.upload(stream.id, compress(ndjson([{ id }])), { ...NDJSON, 'content-encoding': encoding }))
        expect(batch.attributes.stages.upload).toMatchObject({ status: 'success', successCount: 1, errorCount: 0 })
      }
    }
    expect((await storedRows(t, stream.id)).map((row) => row.product_id)).toEqual(sent)
  })

  it('treats an empty body labelled gzip as an empty payload, as an empty uncompressed one', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const batch = expectBatch(await c.upload(stream.id, '', GZIP_NDJSON), 422)
    expect(batch.attributes.stages.upload.errors.map((e) => e.message)).toEqual(['Empty Payload'])
  })

  it('treats a gzip body of nothing as an empty payload', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const batch = expectBatch(await c.upload(stream.id, gzipSync(''), GZIP_NDJSON), 422)
    expect(batch.attributes.stages.upload.errors.map((e) => e.message)).toEqual(['Empty Payload'])
  })

  it.each([
    ['bytes that are not gzip', () => Buffer.from('{"id":"1"}\n{"id":"2"}\n')],
    ['a truncated gzip body', () => gzipSync(ndjson(Array.from({ length: 2000 }, (_, i) => ({ id: String(i), v: Math.random() })))).subarray(0, 4000)],
    [
      'a gzip body with a damaged checksum',
      () => {
        const gz = gzipSync('{"id":"1"}\n{"id":"2"}\n')
        gz.writeUInt32LE((gz.readUInt32LE(gz.length - 8) + 1) >>> 0, gz.length - 8)
        return gz
      },
    ],
  ])('answers 400 for %s and stores nothing', async (_case, body) => {
    for (const type of ['chunked', 'referenced']) {
      const c = await streamClient(t)
      const stream = await given.stream({ account: c.account, type: type })
      expectApiError(await c.upload(stream.id, body(), GZIP_NDJSON), 400, /gzip/i)
      expect(await c.batches(stream.id)).toEqual([])
      expect(await storedCounts(t, stream.id)).toEqual({ batches: 0, rows: 0, payloadChunks: 0 })
    }
  })

  it('refuses an unknown Content-Encoding with 415', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    expectApiError(await c.upload(stream.id, '{"id":"1"}\n', { ...NDJSON, 'content-encoding': 'br' }), 415)
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 0, rows: 0, payloadChunks: 0 })
  })
})
