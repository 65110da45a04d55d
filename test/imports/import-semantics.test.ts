import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { JSON_BODY, readBatch } from '../helpers/clients.js'
import { batchIdOf } from '../helpers/responses.js'
import { importFixture } from '../helpers/factories.js'

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

describe('rows and columns across imports', () => {
  it('replaces rows whole, applies deletes, and keeps a column while any row has a value', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    await f.upload(stream, [
      { id: 'A', title: 'Shirt', size: 'M' },
      { id: 'B', title: 'Shoe', size: '42' },
      { id: 'C', title: 'Hat' },
    ])
    expect((await f.run()).status).toBe('success')

    // A loses its size (replaced whole), D brings a new column, C is deleted.
    await f.upload(stream, [
      { id: 'A', title: 'Shirt v2' },
      { id: 'D', title: 'Sock', material: 'wool' },
    ])
    await f.deleteProducts(stream, ['C'])
    expect((await f.run()).status).toBe('success')
    let stage = await f.stage()
    expect(stage.rows).toEqual([
      { id: 'A', title: 'Shirt v2' },
      { id: 'B', title: 'Shoe', size: '42' },
      { id: 'D', title: 'Sock', material: 'wool' },
    ])
    expect(stage.columns).toEqual(['id', 'title', 'size', 'material'])

    // The last row with a size loses it: the column goes.
    await f.upload(stream, [{ id: 'B', title: 'Shoe', size: '' }])
    expect((await f.run()).status).toBe('success')
    stage = await f.stage()
    expect(stage.columns).toEqual(['id', 'title', 'material'])
    const history = (await f.platform('GET', `/sites/${f.site.id}/importhistory`)).json<{ Importhistory: { product_count: string }[] }>()
    expect(history.Importhistory.map((entry) => entry.product_count)).toEqual(['3', '3', '3'])
  })

  it('applies batches in upload order: the later row of an id wins, also within one batch', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    await f.upload(stream, [
      { id: 'A', v: '1' },
      { id: 'A', v: '2' },
      { id: 'B', v: '1' },
    ])
    await f.upload(stream, [{ id: 'B', v: '2' }])
    await f.deleteProducts(stream, ['A'])
    await f.upload(stream, [{ id: 'A', v: '3' }])
    expect((await f.run()).status).toBe('success')
    expect((await f.stage()).rows).toEqual([
      { id: 'A', v: '3' },
      { id: 'B', v: '2' },
    ])
  })

  it('delete all empties the stream: the import then fails and keeps the previous stage', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    await f.upload(stream, [{ id: 'A', title: 'Shirt' }])
    expect((await f.run()).status).toBe('success')
    await f.deleteProducts(stream, 'all')
    const failed = await f.run()
    expect(failed.status).toBe('failed')
    expect(failed.message).toMatch(/has no products/)
    const [error] = await f.errors(failed.pid)
    expect(error).toMatchObject({ error: '1001', type: 'Error', classification: 'high', pid: failed.pid })
    expect(JSON.parse(error?.data ?? '{}')).toMatchObject({ stream_id: stream })
    expect((await f.stage()).rows).toEqual([{ id: 'A', title: 'Shirt' }])
    const status = (await f.platform('GET', `/sites/${f.site.id}/status/${failed.pid}`)).json<{ links: Record<string, string>[] }>()
    expect(status.links).toContainEqual({ errors: expect.stringContaining(`/platform/v2/sites/${f.site.id}/errors?pid=${failed.pid}`) })
  })

  it('an empty main source that allows empty imports purges the stage', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    const source = await f.attach(stream)
    await f.upload(stream, [{ id: 'A', title: 'Shirt' }])
    expect((await f.run()).status).toBe('success')
    await f.deleteProducts(stream, 'all')
    expect((await f.platform('PUT', `/sites/${f.site.id}/streams/${source}`, { import_empty: true })).statusCode).toBe(200)
    expect((await f.run()).status).toBe('success')
    expect(await f.stage()).toEqual({ columns: [], rows: [] })
  })

  it('a site whose only main source never received data fails with a site error', async () => {
    const f = await importFixture(t)
    await f.attach(await f.createStream())
    const run = await f.run()
    expect(run.status).toBe('failed')
    expect((await f.errors()).map((e) => e.error)).toEqual(['1001'])
  })

  it('a site without an active main source fails with its own code', async () => {
    const f = await importFixture(t)
    const run = await f.run()
    expect(run.status).toBe('failed')
    expect((await f.errors(run.pid)).map((e) => e.error)).toEqual(['1002'])
  })
})

describe('several sources', () => {
  it('stacks main sources (a later source wins on equal id) and joins additional ones on the id column', async () => {
    const f = await importFixture(t, { id_column: 'gtin' })
    const first = await f.createStream()
    const second = await f.createStream()
    const extra = await f.createStream()
    await f.attach(first)
    await f.attach(second)
    await f.attach(extra, { import_type: 2 })
    await f.upload(first, [
      { id: 'A', gtin: '111', title: 'old A' },
      { id: 'B', gtin: '222', title: 'B' },
    ])
    await f.upload(second, [
      { id: 'A', gtin: '111', title: 'new A' },
      { id: 'C', gtin: '333', title: 'C' },
    ])
    await f.upload(extra, [
      { id: '111', stock: '5' },
      { id: '333', stock: '0', title: 'C from extra' },
      { id: '999', stock: '9' },
    ])
    expect((await f.run()).status).toBe('success')
    const stage = await f.stage()
    expect(stage.rows).toEqual([
      { id: 'A', gtin: '111', title: 'new A', stock: '5' },
      { id: 'B', gtin: '222', title: 'B' },
      { id: 'C', gtin: '333', title: 'C from extra', stock: '0' },
    ])
    expect(stage.columns).toEqual(['id', 'gtin', 'title', 'stock'])
  })

  it('skips a paused data source', async () => {
    const f = await importFixture(t)
    const main = await f.createStream()
    const paused = await f.createStream()
    await f.attach(main)
    await f.attach(paused, { status: 'paused' })
    await f.upload(main, [{ id: 'A', title: 'a' }])
    const pausedBatch = batchIdOf(await f.upload(paused, [{ id: 'Z', title: 'z' }]))
    expect((await f.run()).status).toBe('success')
    expect((await f.stage()).rows).toEqual([{ id: 'A', title: 'a' }])
    expect((await readBatch(t, f, paused, pausedBatch)).attributes.status).toBe('uploaded')
  })

  it('a stream locked for processing keeps its batches and says so', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream, { import_empty: true })
    const batch = batchIdOf(await f.upload(stream, [{ id: 'A', title: 'a' }]))
    await t.db.updateTable('stream').set({ status: 'locked_processing' }).where('id', '=', stream).execute()
    const run = await f.run()
    expect(run.status).toBe('success')
    expect((await f.errors(run.pid)).map((e) => [e.error, e.type])).toEqual([['1004', 'Info']])
    expect((await readBatch(t, f, stream, batch)).attributes.status).toBe('uploaded')
  })
})

describe('batches', () => {
  it('fills the processing stage and applies a batch once when two sites read the stream', async () => {
    const one = await importFixture(t)
    const two = await importFixture(t, {}, one.c)
    const stream = await one.createStream()
    await one.attach(stream)
    await two.attach(stream)
    const batch = batchIdOf(
      await one.upload(stream, [
        { id: 'A', title: 'a' },
        { id: 'B', title: 'b' },
      ]),
    )
    expect((await one.run()).status).toBe('success')
    const processed = await readBatch(t, one, stream, batch)
    expect(processed.attributes.status).toBe('processed')
    expect(processed.attributes.stages.processing).toMatchObject({ status: 'success', successCount: 2, errorCount: 0 })
    const changedBefore = await t.db
      .selectFrom('stream_product')
      .select(['product_id', 'changed_seq'])
      .where('stream_id', '=', stream)
      .orderBy('product_id')
      .execute()

    expect((await two.run()).status).toBe('success')
    expect((await two.stage()).rows).toEqual([
      { id: 'A', title: 'a' },
      { id: 'B', title: 'b' },
    ])
    expect(await readBatch(t, two, stream, batch)).toEqual(processed)
    const changedAfter = await t.db
      .selectFrom('stream_product')
      .select(['product_id', 'changed_seq'])
      .where('stream_id', '=', stream)
      .orderBy('product_id')
      .execute()
    expect(changedAfter).toEqual(changedBefore)
  })

  it('parses referenced payloads at import and reports the products that failed', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream('referenced')
    await f.attach(stream)
    const payload = '[{"id":"A","price":10.50},{"id":"B","nested":{"x":1}},{"title":"no id"},{"id":"C","ok":true}]'
    const batch = batchIdOf(await f.upload(stream, payload, JSON_BODY))
    const run = await f.run()
    expect(run.status).toBe('success')
    expect((await f.stage()).rows).toEqual([
      { id: 'A', price: '10.50' },
      { id: 'C', ok: '1' },
    ])
    const view = await readBatch(t, f, stream, batch)
    expect(view.attributes.status).toBe('processed')
    expect(view.attributes.stages.processing).toMatchObject({ status: 'warning', successCount: 2, errorCount: 2 })
    expect(view.attributes.stages.processing?.errors.map((e) => e.message).sort()).toEqual([
      'Missing "id" attribute',
      'Nested objects and arrays are not supported; flatten or concatenate the value',
    ])
    expect((await f.errors(run.pid)).map((e) => [e.error, e.type])).toEqual([['1003', 'Warning']])
  })

  it('a referenced payload whose every product fails makes a failed batch', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream('referenced')
    await f.attach(stream, { import_empty: true })
    const batch = batchIdOf(await f.upload(stream, '[{"title":"no id"}, 12]', JSON_BODY))
    expect((await f.run()).status).toBe('success')
    const view = await readBatch(t, f, stream, batch)
    expect(view.attributes.status).toBe('failed')
    expect(view.attributes.stages.processing).toMatchObject({ status: 'failure', successCount: 0, errorCount: 2 })
  })
})
