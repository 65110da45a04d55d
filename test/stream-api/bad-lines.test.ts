import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { factories } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { NDJSON, readBatch, streamClient } from '../helpers/clients.js'
import { expectBatch, ISO_SECONDS } from '../helpers/responses.js'
import { storedCounts } from './stored-rows.js'

// A mostly-bad upload (issue 10, finding 7): 2.5 million bad lines, a few KB gzipped, used to burn
// ~30 times the time of good lines per line and end in a 503 instead of its error report. Every
// line is still judged and counted; lines already judged cost a lookup. What a bad line costs next to a
// good one is measured by `npm run bench:bad-lines` (bench/results/bad-lines.md), not here.

const t = useTestApp(HIGH_LIMITS)
const given = factories(t)
const BAD = ['x', '{', '{"id":"1","t":"abc', '{"a":"1"}', '[1,2]', '{}']
const MESSAGES = [
  'Syntax error',
  'Control character error, possibly incorrectly encoded',
  'Missing "id" attribute',
  'Product row must be a JSON object',
  'Empty Product Attributes',
]

describe('an upload of mostly bad lines', () => {
  it('answers 202 with its error report, counting every line, and stores the good ones', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const cycle = `${BAD.join('\n')}\n`
    const repeats = Math.ceil(2_500_000 / BAD.length)
    const body = gzipSync(`{"id":"good-1"}\n${cycle.repeat(repeats)}{"id":"good-2"}\n`, { level: 9 })
    expect(body.length).toBeLessThan(64 * 1024)
    const batch = expectBatch(await c.upload(stream.id, body, { ...NDJSON, 'content-encoding': 'gzip' }))
    const upload = batch.attributes.stages.upload
    expect(upload).toMatchObject({ status: 'warning', successCount: 2, errorCount: repeats * BAD.length })
    expect(upload.errors.map((e) => e.message).sort()).toEqual([...MESSAGES].sort())
    const syntax = upload.errors.find((e) => e.message === 'Syntax error')
    expect(syntax).toMatchObject({ occurrences: repeats * 2, example: { lineNumber: 2, value: 'x' } })
    expect(await storedCounts(t, stream.id)).toMatchObject({ batches: 1, rows: 2 })
  })

  it('judges 200,000 distinct bad lines one by one, answering with one error per message and its first line', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const lines = 200_000
    // Every line differs, so none is answered from the lines already judged: each one is parsed.
    const bad = Array.from({ length: lines }, (_, i) => (i % 2 === 0 ? `{"id":"b${i}","title":"Product ${i}` : `oops ${i}`)).join('\n')
    const batch = expectBatch(await c.upload(stream.id, bad))
    expect(batch.attributes).toMatchObject({ status: 'failed', errorCount: lines })
    expect(batch.attributes.stages.upload).toEqual({
      completedAt: expect.stringMatching(ISO_SECONDS) as string,
      status: 'failure',
      successCount: 0,
      errorCount: lines,
      errors: [
        {
          message: 'Control character error, possibly incorrectly encoded',
          occurrences: lines / 2,
          example: { lineNumber: 1, value: '{"id":"b0","title":"Product 0' },
        },
        { message: 'Syntax error', occurrences: lines / 2, example: { lineNumber: 2, value: 'oops 1' } },
      ],
    })
    expect(await readBatch(t, c, stream.id, batch.id)).toEqual(batch)
    expect(await storedCounts(t, stream.id)).toMatchObject({ batches: 1, rows: 0 })
  })
})
