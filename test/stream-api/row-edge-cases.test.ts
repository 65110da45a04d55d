import { Readable } from 'node:stream'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { factories } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { expectApiError, expectBatch, type BatchJson } from '../helpers/responses.js'
import { storedCounts, storedRows } from './stored-rows.js'
import { streamClient } from '../helpers/clients.js'

// Rows and values at the edges of what Postgres can store (NUL, unpaired surrogates), the size
// limits (a line's length, the distinct attribute names of a stream), and error examples that must
// stay storable whatever the row held.

const t = useTestApp(HIGH_LIMITS)
const given = factories(t)
const MAX_LINE = 2_097_152
// MAX_ATTRIBUTES_PER_STREAM's default.
const MAX_COLUMNS = 1000
const CONTROL = 'Control character error, possibly incorrectly encoded'
const TOO_LARGE = 'Product payload is too large'
const LONE_SURROGATE = /\p{Cs}/u

/** Uploads `{"id":"ok"}`, then `line`, then `{"id":"after"}`; returns the batch as a later GET reads it. */
async function uploadAround(line: string | Buffer | Buffer[]): Promise<{ batch: BatchJson; streamId: string }> {
  const c = await streamClient(t)
  const stream = await given.stream({ account: c.account })
  const parts = Array.isArray(line) ? line : [Buffer.isBuffer(line) ? line : Buffer.from(line)]
  const chunks = [Buffer.from('{"id":"ok"}\n'), ...parts, Buffer.from('\n{"id":"after"}\n')]
  const answered = expectBatch(await c.upload(stream.id, chunks.length > 3 ? Readable.from(chunks) : Buffer.concat(chunks)))
  const read = await c.send('GET', `/streams/${stream.id}/batches/${answered.id}`)
  expect(read.statusCode, read.body).toBe(200)
  const batch = read.json<{ data: BatchJson }>().data
  expect(batch.attributes).toEqual(answered.attributes)
  return { batch, streamId: stream.id }
}

/** The line between `ok` and `after` was refused with `message`; both neighbours were stored. */
async function expectRefused(line: string | Buffer | Buffer[], message: string | RegExp): Promise<string> {
  const { batch, streamId } = await uploadAround(line)
  const upload = batch.attributes.stages.upload
  expect(upload).toMatchObject({ status: 'warning', successCount: 2, errorCount: 1 })
  const [error] = upload.errors
  expect(upload.errors).toHaveLength(1)
  expect(error?.message).toMatch(message)
  expect(error).toMatchObject({ occurrences: 1, example: { lineNumber: 2 } })
  expect((await storedRows(t, streamId)).map((r) => r.product_id)).toEqual(['ok', 'after'])
  return error?.example.value ?? ''
}

describe('unpaired surrogates (escaped in JSON) cannot be stored', () => {
  it.each([
    ['the id', '{"id":"\\ud800"}'],
    ['a value', '{"id":"1","name":"a\\uDC00b"}'],
    ['an attribute name', '{"id":"1","na\\ud83dme":"b"}'],
    ['a value ending in a high surrogate', '{"id":"1","name":"ab\\uD83D"}'],
  ])('refuses one in %s with the control-character error, quoting the line', async (_case, line) => {
    expect(await expectRefused(line, CONTROL)).toBe(line)
  })

  it('keeps an escaped surrogate pair, which Postgres reads as jsonb', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    expectBatch(await c.upload(stream.id, '{"id":"\\ud83d\\ude00","e":"x\\uD83D\\uDE00y"}\n'))
    const row = await t.db
      .selectFrom('batch_row')
      .innerJoin('batch', 'batch.id', 'batch_row.batch_id')
      .select(['batch_row.product_id', sql<Record<string, string>>`batch_row.data::jsonb`.as('json')])
      .where('batch.stream_id', '=', stream.id)
      .executeTakeFirstOrThrow()
    expect(row).toEqual({ product_id: '😀', json: { id: '😀', e: 'x😀y' } })
  })
})

describe('error examples stay storable', () => {
  it('replaces a raw NUL byte in the example of a refused line', async () => {
    const line = Buffer.from('{"id":"1","name":"a\0b"}')
    expect(await expectRefused(line, CONTROL)).toBe('{"id":"1","name":"a\uFFFDb"}')
  })

  it('never cuts a surrogate pair in half when it shortens a long example', async () => {
    const head = '{"id":"1","d":"'
    // The emoji's two UTF-16 units sit at positions 999 and 1000, across the cut; the line lacks its `}`.
    const line = `${head}${'x'.repeat(999 - head.length)}😀${'y'.repeat(50)}"`
    const value = await expectRefused(line, 'Syntax error')
    expect(LONE_SURROGATE.test(value)).toBe(false)
    expect(value.length).toBeLessThan(line.length)
    expect(line.startsWith(value.replace(/…$/, ''))).toBe(true)
  })

  it('replaces a NUL in the head of an oversized line (one block)', async () => {
    const head = '{"id":"big","d":"\0'
    const line = `${head}${'x'.repeat(MAX_LINE)}"}`
    const value = await expectRefused(line, TOO_LARGE)
    expect(value.startsWith('{"id":"big","d":"\uFFFDxxx')).toBe(true)
  })

  it('replaces a NUL in the head of an oversized line that arrives in many chunks', async () => {
    const parts = [Buffer.from('{"id":"big","d":"\0')]
    for (let sent = 0; sent <= MAX_LINE; sent += 64 * 1024) parts.push(Buffer.alloc(64 * 1024, 'x'))
    parts.push(Buffer.from('"}'))
    const value = await expectRefused(parts, TOO_LARGE)
    expect(value.startsWith('{"id":"big","d":"\uFFFDxxx')).toBe(true)
  })
})

describe('line length (2,097,152 bytes)', () => {
  const row = (bytes: number) => {
    const head = '{"id":"big","d":"'
    return `${head}${'x'.repeat(bytes - head.length - 2)}"}`
  }

  it('does not count the \\r of a CRLF line ending', async () => {
    const { batch } = await uploadAround(`${row(MAX_LINE)}\r`)
    expect(batch.attributes.stages.upload).toMatchObject({ status: 'success', successCount: 3, errorCount: 0 })
  })

  it('still refuses a CRLF line one byte over the limit', async () => {
    await expectRefused(`${row(MAX_LINE + 1)}\r`, TOO_LARGE)
  })

  it('calls an over-long line with invalid UTF-8 too large, as it would be in any chunking', async () => {
    const line = Buffer.concat([Buffer.from('{"id":"big","d":"'), Buffer.from([0xff]), Buffer.alloc(MAX_LINE, 'x'), Buffer.from('"}')])
    await expectRefused(line, TOO_LARGE)
  })

  it('calls a line with invalid UTF-8 within the limit a control-character error', async () => {
    await expectRefused(Buffer.concat([Buffer.from('{"id":"bad","d":"'), Buffer.from([0xff]), Buffer.from('"}')]), CONTROL)
  })
})

describe('distinct attribute names per stream', () => {
  it(`refuses rows that would name more than ${MAX_COLUMNS} attributes, keeping the others`, async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    // "id" plus one new name per row: row N brings the count to N + 1.
    const lines = Array.from({ length: MAX_COLUMNS + 2 }, (_, i) => `{"id":"${i + 1}","k${i + 1}":"v"}`)
    lines.push('{"id":"known","k1":"v","k2":"w"}')
    const batch = expectBatch(await c.upload(stream.id, lines.join('\n') + '\n'))
    const upload = batch.attributes.stages.upload
    expect(upload).toMatchObject({ status: 'warning', successCount: MAX_COLUMNS, errorCount: 3 })
    const [error] = upload.errors
    expect(upload.errors).toHaveLength(1)
    expect(error?.message).toMatch(/at most 1,000 distinct names/)
    expect(error).toMatchObject({ occurrences: 3, example: { lineNumber: MAX_COLUMNS, value: lines[MAX_COLUMNS - 1] } })
    const stored = await t.db.selectFrom('batch').select('columns').where('id', '=', batch.id).executeTakeFirstOrThrow()
    expect(stored.columns).toHaveLength(MAX_COLUMNS)
    expect(stored.columns.slice(0, 3)).toEqual(['id', 'k1', 'k2'])
    expect((await storedCounts(t, stream.id)).rows).toBe(MAX_COLUMNS)
  })

  it('refuses a single row with more names than the limit', async () => {
    const attributes = Array.from({ length: MAX_COLUMNS }, (_, i) => `"a${i}":"v"`).join(',')
    await expectRefused(`{"id":"wide",${attributes}}`, /at most 1,000 distinct names/)
  })

  it('counts the names of every upload of the stream, not of one upload', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const wide = (prefix: string, count: number) => `${Array.from({ length: count }, (_, i) => `{"id":"${prefix}${i}","${prefix}${i}":"v"}`).join('\n')}\n`
    // 600 + id, then 600 more: the second upload may bring only 399 new names.
    expect(expectBatch(await c.upload(stream.id, wide('a', 600))).attributes.stages.upload).toMatchObject({ successCount: 600, errorCount: 0 })
    const second = expectBatch(await c.upload(stream.id, wide('b', 600))).attributes.stages.upload
    expect(second).toMatchObject({ status: 'warning', successCount: 399, errorCount: 201 })
    expect(second.errors[0]?.message).toMatch(/a stream may use at most 1,000 distinct names/)
    // Names the stream already has are still fine, in a third upload too.
    expect(expectBatch(await c.upload(stream.id, '{"id":"x","a1":"1","b1":"2"}\n')).attributes.stages.upload).toMatchObject({ successCount: 1, errorCount: 0 })
    expect(expectBatch(await c.upload(stream.id, '{"id":"y","new":"1"}\n')).attributes.stages.upload).toMatchObject({ successCount: 0, errorCount: 1 })
  })

  it('refuses a row bringing a new attribute name over 255 characters', async () => {
    await expectRefused(`{"id":"long","${'n'.repeat(256)}":"v"}`, 'Attribute name too long: at most 255 characters')
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    expect(expectBatch(await c.upload(stream.id, `{"id":"ok","${'ü'.repeat(255)}":"v"}\n`)).attributes.stages.upload).toMatchObject({
      successCount: 1,
      errorCount: 0,
    })
  })

  it('forgets the names once every row is deleted', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const wide = `{"id":"w",${Array.from({ length: MAX_COLUMNS - 1 }, (_, i) => `"a${i}":"v"`).join(',')}}\n`
    expect(expectBatch(await c.upload(stream.id, wide)).attributes.stages.upload).toMatchObject({ successCount: 1 })
    expect(expectBatch(await c.upload(stream.id, '{"id":"n","other":"1"}\n')).attributes.stages.upload).toMatchObject({ successCount: 0, errorCount: 1 })
    expectBatch(await c.send('DELETE', `/streams/${stream.id}/products?all=true`))
    expect(expectBatch(await c.upload(stream.id, '{"id":"n","other":"1"}\n')).attributes.stages.upload).toMatchObject({ successCount: 1, errorCount: 0 })
  })
})

describe('DELETE /streams/{streamId}/products/{productId}', () => {
  it('refuses a NUL in the product id with a JSON:API error and stores nothing', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const response = await c.send('DELETE', `/streams/${stream.id}/products/a%00b`)
    expect([400, 422]).toContain(response.statusCode)
    expectApiError(response, response.statusCode, /NUL/)
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 0, rows: 0, payloadChunks: 0 })
    expectBatch(await c.send('DELETE', `/streams/${stream.id}/products/a%01b`))
  })
})
