import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { createChannel, download, history, readChannel } from '../helpers/clients.js'
import { feedPaths } from '../helpers/responses.js'
import { historyCounts, runOk, stagePage, type Row } from './feed-rows.js'

// A channel without a mapping keeps no copy of its clean rows' data: they refer to the import
// stage's rows (issue 25). What a client reads of the channel stage must still be the last export's
// data, whatever imports ran since: changed rows, deleted rows, a full rebuild of the import stage
// from another set of data sources; and the next export must compare against that data exactly.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

const row = (id: string, version: number, extra: Row = {}): Row => ({ id, title: `${id} v${version}`, price: `${version}.00`, ...extra })

const readStage = (f: ImportFixture, stage: string, query = '') => stagePage(t, f, stage, query)
const counts = historyCounts

describe('a channel stage whose rows refer to the import stage', () => {
  it('reads as the last export wrote it until the next export, through changes, deletes and a full rebuild', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    expect(
      (
        await f.upload(
          stream,
          ['A', 'B', 'C', 'E'].map((id) => row(id, 1)),
        )
      ).statusCode,
    ).toBe(202)
    const channel = await createChannel(f, { format: 'csv' })
    await runOk(f, 'all')
    const exported = ['A', 'B', 'C', 'E'].map((id) => row(id, 1))
    const channelStage = `channel/${channel.id}`
    expect(await readStage(f, channelStage)).toEqual(exported)

    // Import only: A changed, B deleted, D new, C and E untouched.
    expect((await f.upload(stream, [row('A', 2), row('D', 2)])).statusCode).toBe(202)
    expect((await f.deleteProducts(stream, ['B'])).statusCode).toBe(202)
    await runOk(f, 'import')
    expect(await readStage(f, 'import')).toEqual([row('A', 2), row('C', 1), row('D', 2), row('E', 1)])
    expect(await readStage(f, channelStage), 'the channel stage is still the export').toEqual(exported)
    expect(await readStage(f, channelStage, `?filter=${encodeURIComponent("title = 'A v1'")}&fields=id,price`)).toEqual([{ id: 'A', price: '1.00' }])
    expect(await readStage(f, channelStage, `?filter=${encodeURIComponent("title = 'A v2'")}`)).toEqual([])

    // A second import changes A again: the channel stage keeps the exported version, not the one in between.
    expect((await f.upload(stream, [row('A', 3)])).statusCode).toBe(202)
    await runOk(f, 'import')
    expect(await readStage(f, channelStage, '?fields=id,title')).toEqual(exported.map(({ id, title }) => ({ id, title })))

    await runOk(f, 'export-all')
    const afterSecond = [row('A', 3), row('C', 1), row('D', 2), row('E', 1)]
    expect(await readStage(f, channelStage)).toEqual(afterSecond)
    expect(counts((await history(f, channel.id))[0])).toEqual([1, 1, 1, 2])

    // A second main source: the import stage is rebuilt whole from both; the channel stage stays as exported.
    const second = await f.createStream()
    expect((await f.upload(second, [row('C', 9), row('F', 9)])).statusCode).toBe(202)
    await f.attach(second)
    await runOk(f, 'import')
    expect(await readStage(f, 'import')).toEqual([row('A', 3), row('C', 9), row('D', 2), row('E', 1), row('F', 9)])
    expect(await readStage(f, channelStage)).toEqual(afterSecond)

    await runOk(f, 'export-all')
    expect(await readStage(f, channelStage)).toEqual([row('A', 3), row('C', 9), row('D', 2), row('E', 1), row('F', 9)])
    expect(counts((await history(f, channel.id))[0])).toEqual([1, 1, 0, 3])
    const [path] = feedPaths(await readChannel(f, channel.id))
    const file = await download(t, path ?? '')
    expect(file.body.split('\n').filter(Boolean)).toEqual(['id,title,price', 'A,A v3,3.00', 'C,C v9,9.00', 'D,D v2,2.00', 'E,E v1,1.00', 'F,F v9,9.00'])
  })

  it('compares a row changed and changed back since the export as unchanged, and reads it as exported', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    expect((await f.upload(stream, [row('A', 1), row('B', 1)])).statusCode).toBe(202)
    const channel = await createChannel(f, { format: 'csv' })
    await runOk(f, 'all')
    expect((await f.upload(stream, [row('A', 2)])).statusCode).toBe(202)
    await runOk(f, 'import')
    expect((await f.upload(stream, [row('A', 1)])).statusCode).toBe(202)
    await runOk(f, 'import')
    await runOk(f, 'export-all')
    expect(counts((await history(f, channel.id))[0])).toEqual([0, 0, 0, 2])
    expect(await readStage(f, `channel/${channel.id}`)).toEqual([row('A', 1), row('B', 1)])
    // And it refers again: a later change of it is compared with what was exported.
    expect((await f.upload(stream, [row('A', 4)])).statusCode).toBe(202)
    await runOk(f, 'import')
    expect(await readStage(f, `channel/${channel.id}`)).toEqual([row('A', 1), row('B', 1)])
    await runOk(f, 'export-all')
    expect(counts((await history(f, channel.id))[0])).toEqual([0, 1, 0, 1])
    expect(await readStage(f, `channel/${channel.id}`)).toEqual([row('A', 4), row('B', 1)])
  })

  it('compares its rows by the data they refer to when the channel is given a mapping before any import', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    expect((await f.upload(stream, [row('A', 1), row('B', 1), row('C', 1)])).statusCode).toBe(202)
    const channel = await createChannel(f, { format: 'csv' })
    await runOk(f, 'all')
    // The same three columns, named one by one: every row exports the same data, now built by the mapping.
    const mapping = ['id', 'title', 'price'].map((column) => ({ column, source: column }))
    const updated = await f.platform('PUT', `/sites/${f.site.id}/channels/${channel.id}`, { mapping })
    expect(updated.statusCode, updated.body).toBe(200)
    await runOk(f, 'export-all')
    expect(counts((await history(f, channel.id))[0])).toEqual([0, 0, 0, 3])
    expect(await readStage(f, `channel/${channel.id}`)).toEqual([row('A', 1), row('B', 1), row('C', 1)])
  })
})
