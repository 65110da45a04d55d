import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture } from '../helpers/factories.js'

// A product id is an index key of the stream and of every stage: Postgres caps index entries at
// 2,704 bytes, and one longer id used to make every later import of the stream fail (9002). Ids are
// bounded at 1,000 bytes, refused row by row at upload (and at import for referenced payloads).
const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

const LIMIT_ASCII = 'a'.repeat(1000)
const OVER_ASCII = 'b'.repeat(1001)
const OVER_WIDE = '\u6f22'.repeat(400) // 400 characters, 1,200 bytes in UTF-8
const HUGE = 'c'.repeat(3000)

interface Batch {
  data: { attributes: { stages: { upload: { successCount: number; errorCount: number; errors: { message: string; occurrences: number }[] } } } }
}

describe('product ids past 1,000 bytes', () => {
  it('are refused at upload with a row error, and the stream keeps importing', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    const rows = [{ id: 'ok' }, { id: LIMIT_ASCII }, { id: OVER_ASCII }, { id: OVER_WIDE }, { id: HUGE }].map((row) => ({ ...row, title: 't' }))
    const response = await f.upload(stream, rows)
    expect(response.statusCode, response.body).toBe(202)
    const upload = response.json<Batch>().data.attributes.stages.upload
    expect(upload).toMatchObject({ successCount: 2, errorCount: 3 })
    expect(upload.errors).toEqual([expect.objectContaining({ message: 'Product id too long: at most 1,000 bytes', occurrences: 3 })])

    const run = await f.run('import')
    expect(run.status, run.message).toBe('success')
    expect((await f.stage()).rows.map((row) => row.id).sort()).toEqual([LIMIT_ASCII, 'ok'])
    expect((await f.errors()).map((error) => error.error)).not.toContain('9002')
  })

  it('are refused in a referenced payload at import, counted as failed products, and the rest imported', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream('referenced')
    await f.attach(stream)
    const body = JSON.stringify([
      { id: 'r1', title: 't' },
      { id: HUGE, title: 't' },
      { id: 'r2', title: 't' },
    ])
    const response = await f.upload(stream, body, { 'content-type': 'application/json' })
    expect(response.statusCode, response.body).toBe(202)
    const run = await f.run('import')
    expect(run.status, run.message).toBe('success')
    expect((await f.stage()).rows.map((row) => row.id)).toEqual(['r1', 'r2'])
    expect((await f.errors()).map((error) => error.error)).toEqual(['1003'])
  })
})
