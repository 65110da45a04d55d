import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { JSON_BODY, NDJSON, readBatch } from '../helpers/clients.js'
import { batchIdOf, type BatchJson } from '../helpers/responses.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'

// Issue 11, bug 2: a referenced NDJSON payload is split at its newlines, like a chunked upload. A
// broken line (unterminated string, unbalanced braces, something after the object) is one failed
// product that ends at its newline; the products after it are imported. JSON array payloads keep
// their structure-driven splitting: an element may span lines, and a broken one fails alone.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

/** A processing-stage error as the batch resource has it (BatchJson leaves out the example). */
interface StageErrorView {
  message: string
  occurrences: number
  example: { lineNumber: number; value: string }
}

async function importPayload(payload: string, headers: Record<string, string>): Promise<{ f: ImportFixture; ids: string[]; batch: BatchJson }> {
  const f = await importFixture(t)
  const stream = await f.createStream('referenced')
  await f.attach(stream)
  const batchId = batchIdOf(await f.upload(stream, payload, headers))
  const run = await f.run()
  expect(run.status, run.message).toBe('success')
  const ids = (await f.stage()).rows.map((row) => row.id ?? '')
  return { f, ids, batch: await readBatch(t, f, stream, batchId) }
}

const examples = (batch: BatchJson) => (batch.attributes.stages.processing?.errors ?? []) as StageErrorView[]

describe('referenced NDJSON payloads', () => {
  it('end a broken line at its newline: the next product is imported and the broken line counted as an error', async () => {
    const { f, ids, batch } = await importPayload('{"id":"a"}\n{"id":\n{"id":"b"}', NDJSON)
    expect(ids).toEqual(['a', 'b'])
    expect(batch.attributes.status).toBe('processed')
    expect(batch.attributes.errorCount).toBe(1)
    expect(batch.attributes.stages.processing).toMatchObject({ status: 'warning', successCount: 2, errorCount: 1 })
    expect(examples(batch)).toEqual([{ message: 'Syntax error', occurrences: 1, example: { lineNumber: 2, value: '{"id":' } }])
    const errors = await f.errors()
    expect(errors.map((e) => [e.error, JSON.parse(e.data) as unknown])).toEqual([['1003', expect.objectContaining({ failed_rows: 1 })]])
  })

  it.each([
    ['an unterminated string', '{"id":"x1","title":"no end', 'Control character error, possibly incorrectly encoded'],
    ['an unclosed object', '{"id":"x1","title":"Shirt"', 'Syntax error'],
    ['an unclosed array value', '{"id":"x1","tags":[', 'Syntax error'],
    ['a closing brace too many', '{"id":"x1"}}', 'Syntax error'],
    ['garbage after the object', '{"id":"x1"} trailing', 'Syntax error'],
    ['a second object on the line', '{"id":"x1"} {"id":"x2",', 'Syntax error'],
    ['an opening brace only', '{', 'Syntax error'],
    ['an unterminated string with an escaped quote', '{"id":"x1\\"}', 'Control character error, possibly incorrectly encoded'],
  ])('keep the products around a line with %s', async (_case, broken, message) => {
    const lines = ['{"id":"a","title":"A"}', broken, '{"id":"b","title":"B"}', '', broken, '{"id":"c","title":"C"}']
    const { ids, batch } = await importPayload(`${lines.join('\r\n')}\n${broken}`, NDJSON)
    expect(ids).toEqual(['a', 'b', 'c'])
    expect(batch.attributes.stages.processing).toMatchObject({ status: 'warning', successCount: 3, errorCount: 3 })
    expect(examples(batch)).toEqual([{ message, occurrences: 3, example: { lineNumber: 2, value: `${broken}\r` } }])
  })

  it('numbers failed lines by their line in the payload, blank lines included', async () => {
    const { ids, batch } = await importPayload('\n{"id":"a"}\n\n  \n{"id":"b"\n{"id":"c"}\n', NDJSON)
    expect(ids).toEqual(['a', 'c'])
    expect(examples(batch)).toEqual([{ message: 'Syntax error', occurrences: 1, example: { lineNumber: 5, value: '{"id":"b"' } }])
  })
})

describe('referenced JSON array payloads', () => {
  it('keep elements that span lines, and fail a broken element alone', async () => {
    const payload = '[\n  {"id":"a",\n   "title":"A"},\n  {"id":"b", "title":},\n  {"id":\n"c"}\n]'
    const { ids, batch } = await importPayload(payload, JSON_BODY)
    expect(ids).toEqual(['a', 'c'])
    expect(batch.attributes.stages.processing).toMatchObject({ status: 'warning', successCount: 2, errorCount: 1 })
    expect(batch.attributes.stages.processing?.errors.map((e) => e.message)).toEqual(['Syntax error'])
  })
})
