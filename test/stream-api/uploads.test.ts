import { sql } from 'kysely'
import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { factories } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { errorsByMessage, expectApiError, expectBatch, ISO_SECONDS, type BatchJson } from '../helpers/responses.js'
import { ndjson, streamClient } from '../helpers/clients.js'
import { storedCounts, storedRows } from './stored-rows.js'

const t = useTestApp(HIGH_LIMITS)
const given = factories(t)
const MAX_LINE = 2_097_152

const MESSAGES = {
  emptyAttributes: 'Empty Product Attributes',
  emptyLine: 'Empty Payload line',
  missingId: 'Missing "id" attribute',
  tooLarge: 'Product payload is too large',
  control: 'Control character error, possibly incorrectly encoded',
  syntax: 'Syntax error',
}

/** Uploads `{"id":"ok"}` followed by one line and returns the batch; the line must be refused with `message`. */
async function refusedLine(line: string | Buffer, message: string | RegExp): Promise<BatchJson> {
  const c = await streamClient(t)
  const stream = await given.stream({ account: c.account })
  const body = Buffer.concat([Buffer.from('{"id":"ok"}\n'), Buffer.isBuffer(line) ? line : Buffer.from(line), Buffer.from('\n')])
  const batch = expectBatch(await c.upload(stream.id, body))
  const upload = batch.attributes.stages.upload
  expect(upload).toMatchObject({ status: 'warning', successCount: 1, errorCount: 1 })
  expect(upload.errors).toHaveLength(1)
  expect(upload.errors[0]?.message).toMatch(message)
  expect(upload.errors[0]).toMatchObject({ occurrences: 1, example: { lineNumber: 2 } })
  expect(batch.attributes).toMatchObject({ status: 'uploaded', errorCount: 1 })
  expect((await storedRows(t, stream.id)).map((r) => r.product_id)).toEqual(['ok'])
  return batch
}

describe('chunked validation messages (docs/interface.md section 7)', () => {
  it.each([
    ['an empty object', '{}', MESSAGES.emptyAttributes],
    ['only empty and null values', '{"id":"","a":null}', MESSAGES.emptyAttributes],
    ['an empty line', '', MESSAGES.emptyLine],
    ['a line of blanks', '   \t ', MESSAGES.emptyLine],
    ['no id', '{"name":"Shoe"}', MESSAGES.missingId],
    ['a null id', '{"id":null,"name":"Shoe"}', MESSAGES.missingId],
    ['a raw tab inside a string', '{"id":"1","name":"a\tb"}', MESSAGES.control],
    ['an unterminated string', '{"id":"1","name":"Shoe}', MESSAGES.control],
    ['a missing comma', '{"id":"1" "name":"Shoe"}', MESSAGES.syntax],
    ['a nested object', '{"id":"1","size":{"eu":"42"}}', /nested/i],
    ['an array value', '{"id":"1","tags":["a","b"]}', /nested|array/i],
    ['a NUL character in a value', '{"id":"1","name":"a\\u0000b"}', MESSAGES.control],
    ['a NUL character in an attribute name', '{"id":"1","na\\u0000me":"b"}', MESSAGES.control],
  ])('refuses %s', async (_case, line, message) => {
    const batch = await refusedLine(line, message)
    expect(batch.attributes.stages.upload.errors[0]?.example.value).toBe(line)
  })

  it('keeps a value that only spells \\u0000 with an escaped backslash, and Postgres can read it as jsonb', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    expectBatch(await c.upload(stream.id, '{"id":"1","path":"C:\\\\u0000x"}\n'))
    const row = await t.db
      .selectFrom('batch_row')
      .innerJoin('batch', 'batch.id', 'batch_row.batch_id')
      .select(sql<Record<string, string>>`batch_row.data::jsonb`.as('json'))
      .where('batch.stream_id', '=', stream.id)
      .executeTakeFirstOrThrow()
    expect(row.json).toEqual({ id: '1', path: 'C:\\u0000x' })
  })

  it('refuses invalid UTF-8 bytes as a control character error', async () => {
    const line = Buffer.concat([Buffer.from('{"id":"2","name":"caf'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')])
    await refusedLine(line, MESSAGES.control)
  })

  it('refuses a line over 2,097,152 bytes and keeps a line of exactly that size', async () => {
    const row = (bytes: number) => {
      const head = '{"id":"big","d":"'
      return `${head}${'x'.repeat(bytes - head.length - 2)}"}`
    }
    const exact = row(MAX_LINE)
    expect(Buffer.byteLength(exact)).toBe(MAX_LINE)
    const batch = await refusedLine(row(MAX_LINE + 1), MESSAGES.tooLarge)
    // The example is the raw line, cut at a sane length.
    const example = batch.attributes.stages.upload.errors[0]?.example.value ?? ''
    expect(example.startsWith('{"id":"big","d":"xxx')).toBe(true)
    expect(example.length).toBeLessThan(10_000)

    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const accepted = expectBatch(await c.upload(stream.id, `${exact}\n`))
    expect(accepted.attributes.stages.upload).toMatchObject({ status: 'success', successCount: 1, errorCount: 0 })
  })

  it('refuses an oversized line that arrives in many small chunks and keeps the lines around it', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const chunks = ['{"id":"before"}\n{"id":"huge","d":"']
    for (let sent = 0; sent < MAX_LINE + 100_000; sent += 64 * 1024) chunks.push('y'.repeat(64 * 1024))
    chunks.push('"}\n{"id":"after"}\n')
    const batch = expectBatch(await c.upload(stream.id, Readable.from(chunks.map((s) => Buffer.from(s)))))
    expect(errorsByMessage(batch.attributes.stages.upload)).toEqual({
      [MESSAGES.tooLarge]: { occurrences: 1, example: { lineNumber: 2, value: expect.stringMatching(/^\{"id":"huge","d":"yyy/) } },
    })
    expect((await storedRows(t, stream.id)).map((r) => [r.line_no, r.product_id])).toEqual([
      [1, 'before'],
      [3, 'after'],
    ])
  })
})

describe('grouping and outcome', () => {
  it('groups errors by message with occurrences and the first example, and keeps the valid rows', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const lines = [
      '{"id":"1","name":"First"}',
      '{}',
      '{"name":"no id"}',
      '{"id":"2","name":"Second"}',
      '{"id":"3" "name":"x"}',
      '',
      '{"title":"also no id"}',
      '{}',
      '{"id":"4","name":"Fourth"}',
      '{}',
    ]
    const response = await c.upload(stream.id, lines.join('\n') + '\n')
    const batch = expectBatch(response)
    expect(batch.relationships).toEqual({ stream: { data: { type: 'stream', id: stream.id } } })
    expect(batch.attributes).toMatchObject({ status: 'uploaded', errorCount: 7, stages: { processing: null } })
    const upload = batch.attributes.stages.upload
    expect(upload).toMatchObject({ status: 'warning', successCount: 3, errorCount: 7 })
    expect(upload.completedAt).toMatch(ISO_SECONDS)
    expect(errorsByMessage(upload)).toEqual({
      [MESSAGES.emptyAttributes]: { occurrences: 3, example: { lineNumber: 2, value: '{}' } },
      [MESSAGES.missingId]: { occurrences: 2, example: { lineNumber: 3, value: '{"name":"no id"}' } },
      [MESSAGES.syntax]: { occurrences: 1, example: { lineNumber: 5, value: '{"id":"3" "name":"x"}' } },
      [MESSAGES.emptyLine]: { occurrences: 1, example: { lineNumber: 6, value: '' } },
    })
    expect((await storedRows(t, stream.id)).map((r) => [r.line_no, r.product_id])).toEqual([
      [1, '1'],
      [4, '2'],
      [9, '4'],
    ])

    // The batch reads back as it was answered.
    const read = await c.send('GET', `/streams/${stream.id}/batches/${batch.id}`)
    expect(read.statusCode, read.body).toBe(200)
    expect(read.json<{ data: BatchJson }>().data).toMatchObject({ id: batch.id, attributes: batch.attributes })
  })

  it('reports success when every row is valid', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const batch = expectBatch(await c.upload(stream.id, ndjson([{ id: '1' }, { id: '2' }, { id: '3' }])))
    expect(batch.attributes).toMatchObject({ status: 'uploaded', errorCount: 0 })
    expect(batch.attributes.stages.upload).toMatchObject({ status: 'success', successCount: 3, errorCount: 0, errors: [] })
  })

  it('answers 202 with a failed batch when every row is invalid, storing no row', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const batch = expectBatch(await c.upload(stream.id, '{}\n{"name":"x"}\n'))
    expect(batch.attributes).toMatchObject({ status: 'failed', errorCount: 2 })
    expect(batch.attributes.stages.upload).toMatchObject({ status: 'failure', successCount: 0, errorCount: 2 })
    expect(await storedRows(t, stream.id)).toEqual([])
    expect((await c.batches(stream.id)).map((b) => [b.id, b.attributes.status])).toEqual([[batch.id, 'failed']])
  })

  it('accepts NDJSON with blanks around each object and a final newline (docs/compatibility.md)', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const batch = expectBatch(await c.upload(stream.id, ' {"id":"1"} \n {"id":"2"} \n'))
    expect(batch.attributes.stages.upload).toMatchObject({ status: 'success', successCount: 2, errorCount: 0, errors: [] })
    const last = expectBatch(await c.upload(stream.id, '{"id":"3"}\r\n{"id":"4"}'))
    expect(last.attributes.stages.upload).toMatchObject({ status: 'success', successCount: 2, errorCount: 0 })
    expect((await storedRows(t, stream.id)).map((r) => r.product_id)).toEqual(['1', '2', '3', '4'])
  })
})

describe('row rules (docs/interface.md "Product row rules")', () => {
  it('stores every value as text: true → "1", false and null → "", numbers as written', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const body = [
      '{"id":"A","on":true,"off":false,"none":null,"price":10.50,"qty":3,"neg":-0.0,"exp":1E+3,"text":"true","empty":""}',
      '{"id":12345678901234567890,"price":1.10}',
      '{"id":7}',
      '{"id":"tab\\tand\\\\slash\\n","name":"caf\\u00e9 日本","quote":"say \\"hi\\""}',
    ].join('\n')
    expectBatch(await c.upload(stream.id, body))
    const rows = await storedRows(t, stream.id)
    expect(rows.map((r) => r.product_id)).toEqual(['A', '12345678901234567890', '7', 'tab\tand\\slash\n'])
    const data = rows.map((r) => JSON.parse(r.data ?? 'null') as Record<string, unknown>)
    expect(data).toEqual([
      { id: 'A', on: '1', off: '', none: '', price: '10.50', qty: '3', neg: '-0.0', exp: '1E+3', text: 'true', empty: '' },
      { id: '12345678901234567890', price: '1.10' },
      { id: '7' },
      { id: 'tab\tand\\slash\n', name: 'café 日本', quote: 'say "hi"' },
    ])
  })

  it('records the attribute names of the accepted rows in first-seen order (jsonb does not keep it)', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const body = ['{"id":"1","zeta":"z","alpha":"a"}', '{"broken":', '{"id":"2","alpha":"b","mid":"m"}', '{"id":"3","zeta":"y"}'].join('\n')
    const batch = expectBatch(await c.upload(stream.id, body))
    const row = await t.db.selectFrom('batch').select('columns').where('id', '=', batch.id).executeTakeFirstOrThrow()
    expect(row.columns).toEqual(['id', 'zeta', 'alpha', 'mid'])
  })

  it.each(['POST', 'PUT', 'PATCH'] as const)('%s behaves like every other upload method', async (method) => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const batch = expectBatch(await c.upload(stream.id, '{"id":"1","flag":true}\n{}\n', undefined, method))
    expect(batch.attributes.status).toBe('uploaded')
    expect(errorsByMessage(batch.attributes.stages.upload)).toEqual({
      [MESSAGES.emptyAttributes]: { occurrences: 1, example: { lineNumber: 2, value: '{}' } },
    })
    const rows = await storedRows(t, stream.id)
    expect(rows.map((r) => [r.product_id, JSON.parse(r.data ?? 'null')])).toEqual([['1', { id: '1', flag: '1' }]])
  })
})

describe('empty payloads and content types', () => {
  it.each([
    ['an empty body', ''],
    ['only newlines', '\n\n'],
    ['only blanks', '  \n '],
  ])('answers 422 with a failed batch document for %s and stores nothing', async (_case, body) => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const batch = expectBatch(await c.upload(stream.id, body), 422)
    expect(batch.attributes).toMatchObject({ status: 'failed', errorCount: 1, stages: { processing: null } })
    expect(batch.attributes.stages.upload).toMatchObject({ status: 'failure', successCount: 0, errorCount: 1 })
    expect(batch.attributes.stages.upload.errors.map((e) => [e.message, e.occurrences])).toEqual([['Empty Payload', 1]])
    expect(await c.batches(stream.id)).toEqual([])
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 0, rows: 0, payloadChunks: 0 })
    expectApiError(await c.send('GET', `/streams/${stream.id}/batches/${batch.id}`), 404)
  })

  it.each([
    ['text/csv', { 'content-type': 'text/csv' }],
    ['application/json', { 'content-type': 'application/json' }],
    ['no Content-Type', {}],
  ])('a chunked stream answers 415 naming the accepted type for %s', async (_case, headers) => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    expectApiError(await c.upload(stream.id, '{"id":"1"}\n', headers), 415, /application\/x-ndjson/)
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 0, rows: 0, payloadChunks: 0 })
  })

  it('accepts a Content-Type with parameters and in any case', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    expectBatch(await c.upload(stream.id, '{"id":"1"}\n', { 'content-type': 'Application/X-NDJSON; charset=utf-8' }))
  })
})
