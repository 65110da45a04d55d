import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/test-app.js'
import { importFixture } from '../helpers/factories.js'

// A deleted product stays in its stream as a tombstone until every site reading the stream has
// imported past it; a site reading its stream's changes only needs it to see the delete. Found by
// a differential run: a site whose data source was deleted was not counted meanwhile, another site's
// import forgot the tombstone, and the data source made again read the stream's changes from where
// the site had left off: the deleted product stayed in its stage for good.

const t = useTestApp({ RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

const ids = async (f: { stage(): Promise<{ rows: Record<string, string>[] }> }) => (await f.stage()).rows.map((row) => row.id)

describe('a delete another site saw first', () => {
  it('reaches a site whose data source was deleted and made again meanwhile', async () => {
    const x = await importFixture(t)
    const d = await importFixture(t, {}, x.c)
    const stream = await x.createStream()
    await x.attach(stream)
    const source = await d.attach(stream)
    expect((await x.upload(stream, [{ id: 'SKU1' }, { id: 'SKU2' }, { id: 'SKU3' }])).statusCode).toBe(202)
    expect((await d.run('import')).status).toBe('success')
    expect((await x.run('import')).status).toBe('success')

    const removed = await d.platform('DELETE', `/sites/${d.site.id}/streams/${source}`)
    expect(removed.statusCode, removed.body).toBe(200)
    expect((await x.deleteProducts(stream, ['SKU2'])).statusCode).toBe(202)
    expect((await x.run('import')).status).toBe('success')
    expect(await ids(x)).toEqual(['SKU1', 'SKU3'])

    const made = await d.platform('POST', `/sites/${d.site.id}/streams`, { import_type: 1, stream_id: Number(stream), status: 'active', description: 'again' })
    expect(made.statusCode, made.body).toBe(201)
    const imported = await d.run('import')
    expect(imported.status).toBe('success')
    expect(await ids(d)).toEqual(['SKU1', 'SKU3'])
    expect(imported.message).toMatch(/\b2 products\b/)

    // The next import reads the changes again, from the stage the rebuild left.
    expect((await x.upload(stream, [{ id: 'SKU4' }])).statusCode).toBe(202)
    expect((await d.run('import')).status).toBe('success')
    expect(await ids(d)).toEqual(['SKU1', 'SKU3', 'SKU4'])
  })
})
