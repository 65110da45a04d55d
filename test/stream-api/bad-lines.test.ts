import { performance } from 'node:perf_hooks'
import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { factories } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { NDJSON, streamClient } from '../helpers/clients.js'
import { expectBatch } from '../helpers/responses.js'
import { storedCounts } from './stored-rows.js'

// A mostly-bad upload (issue 10, finding 7): 2.5 million bad lines, a few KB gzipped, used to burn
// ~30 times the time of good lines per line and end in a 503 instead of its error report. Every
// line is still judged and counted; lines already judged cost a lookup.

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

  it('costs no more per line than good lines do (both measured in this run)', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const lines = 200_000
    const good = Array.from({ length: lines }, (_, i) => `{"id":"g${i}","title":"Product ${i}","price":"${i}.99"}`).join('\n')
    const bad = Array.from({ length: lines }, (_, i) => (i % 2 === 0 ? `{"id":"b${i}","title":"Product ${i}` : `oops ${i}`)).join('\n')
    const timed = async (body: string) => {
      const start = performance.now()
      expectBatch(await c.upload(stream.id, body))
      return performance.now() - start
    }
    await timed('{"id":"warm-up"}\n')
    const goodMs = await timed(good)
    const badMs = await timed(bad)
    // Distinct bad lines each need a parse; before the fix they took ~30 times a good line.
    expect(badMs).toBeLessThan(goodMs * 3)
  })
})
