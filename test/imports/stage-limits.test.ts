import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { JSON_BODY, readBatch } from '../helpers/clients.js'
import { batchIdOf } from '../helpers/responses.js'
import { importFixture } from '../helpers/factories.js'

// The catalog's width bounds (issue 10, finding 1) at import time: MAX_STAGE_COLUMNS for the stage
// that several sources add up to, and MAX_ATTRIBUTES_PER_STREAM for referenced payloads, whose rows
// are first read by the import. Small limits here; the defaults are 1,000 each.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0', MAX_ATTRIBUTES_PER_STREAM: '40', MAX_STAGE_COLUMNS: '50' })

/** One row with `id` and `count` attributes named `<prefix>0..`. */
function wideRow(id: string, prefix: string, count: number): Record<string, string> {
  return Object.fromEntries([['id', id], ...Array.from({ length: count }, (_, i) => [`${prefix}${i}`, 'v'])])
}

describe('MAX_STAGE_COLUMNS', () => {
  it('fails an import whose stage would be wider, with site error 1006, and keeps the previous stage', async () => {
    const f = await importFixture(t)
    const main = await f.createStream()
    await f.attach(main)
    expect((await f.upload(main, [wideRow('A', 'm', 30)])).statusCode).toBe(202)
    expect((await f.run()).status).toBe('success')

    const extra = await f.createStream()
    await f.attach(extra, { import_type: 2 })
    expect((await f.upload(extra, [wideRow('A', 'x', 30)])).statusCode).toBe(202)
    const run = await f.run()
    expect(run.status).toBe('failed')
    expect(run.message).toMatch(/61 columns, more than the limit of 50 \(MAX_STAGE_COLUMNS\)/)
    const [error] = await f.errors(run.pid)
    expect(error).toMatchObject({ error: '1006', type: 'Error', classification: 'high' })
    expect(JSON.parse(error?.data ?? '{}')).toEqual({ columns: 61, limit: 50 })

    const read = await t.request({ method: 'GET', url: `/product/v2/site/${f.site.id}/stage/import/0/properties`, headers: f.account.platform })
    expect(read.statusCode, read.body).toBe(200)
    expect(read.json<{ columns: string[]; products: number }>()).toMatchObject({ products: 1, columns: Object.keys(wideRow('A', 'm', 30)) })
  })
})

describe('MAX_ATTRIBUTES_PER_STREAM for referenced payloads', () => {
  it('refuses, at import, the products that would bring the stream past the limit, and keeps the others', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream('referenced')
    await f.attach(stream)
    const rows = [wideRow('A', 'a', 30), wideRow('B', 'b', 20), { id: 'C', a1: 'known' }]
    const batch = batchIdOf(await f.upload(stream, JSON.stringify(rows), JSON_BODY))
    const run = await f.run()
    expect(run.status).toBe('success')
    expect((await f.stage()).rows.map((row) => row.id)).toEqual(['A', 'C'])
    const view = await readBatch(t, f, stream, batch)
    expect(view.attributes.stages.processing).toMatchObject({ status: 'warning', successCount: 2, errorCount: 1 })
    expect(view.attributes.stages.processing?.errors[0]?.message).toMatch(/a stream may use at most 40 distinct names/)
    expect((await f.errors(run.pid)).map((e) => e.error)).toEqual(['1003'])
  })
})
