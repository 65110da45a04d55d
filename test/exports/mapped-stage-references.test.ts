import { parse as parseCsv } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { createChannel, download, history, readChannel } from '../helpers/clients.js'
import { feedPaths } from '../helpers/responses.js'
import { historyCounts, runOk, stagePage, type Row } from './feed-rows.js'
import { addRule } from '../rules/rule-fixture.js'

// A mapped channel keeps no copy of its clean rows' data either (issue 35): they refer to the import
// stage's rows through the mapping the stage was saved with. What a client reads of the channel
// stage, of its feed and of its counts must be what a channel that keeps every row's data gives:
// the last export's mapped data until the next export, through changes, deletes, a rebuild of the
// import stage, a change of the mapping itself, and rules that change some rows and not others.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

const row = (id: string, version: number, extra: Row = {}): Row => ({ id, title: `${id} v${version}`, price: `${version}.00`, ...extra })

type Mapped = { column: string; source: string } | { column: string; value: string }

// Renamed columns, a constant, and a column no row has ('' in every row).
const MAPPING = [
  { column: 'sku', source: 'id' },
  { column: 'name', source: 'title' },
  { column: 'price', source: 'price' },
  { column: 'brand', value: 'Acme "Outdoor", Inc.' },
  { column: 'color', source: 'color' },
]
const mapped = (r: Row): Row => ({ sku: r.id ?? '', name: r.title ?? '', price: r.price ?? '', brand: 'Acme "Outdoor", Inc.', color: r.color ?? '' })

const readStage = (f: ImportFixture, stage: string, query = '') => stagePage(t, f, stage, query)
const counts = historyCounts

/** The ids of the channel stage's rows that keep a copy of their data (the others refer to the import stage's). */
async function copiedRows(f: ImportFixture, channelId: string): Promise<string[]> {
  const rows = await t.db
    .selectFrom('stage_product')
    .select('product_id')
    .where('site_id', '=', f.site.id)
    .where('stage', '=', 'channel')
    .where('stage_id', '=', channelId)
    .where('data', 'is not', null)
    .orderBy('product_id')
    .execute()
  return rows.map((r) => r.product_id)
}

async function feedLines(f: ImportFixture, channelId: string): Promise<string[]> {
  const [path] = feedPaths(await readChannel(f, channelId))
  return (await download(t, path ?? '')).body.split('\n').filter(Boolean)
}

async function mappedSite(rows: Row[], channel: Record<string, unknown> = {}) {
  const f = await importFixture(t)
  const stream = await f.createStream()
  await f.attach(stream)
  expect((await f.upload(stream, rows)).statusCode).toBe(202)
  const created = await createChannel(f, { format: 'csv', mapping: MAPPING, ...channel })
  await runOk(f, 'all')
  return { f, stream, channel: created, stage: `channel/${created.id}` }
}

describe('a mapped channel stage whose rows refer to the import stage', () => {
  it('reads as the last export mapped it until the next export, through changes, deletes and a full rebuild', async () => {
    const { f, stream, channel, stage } = await mappedSite(['A', 'B', 'C', 'E'].map((id) => row(id, 1, { color: id === 'C' ? 'red' : '' })))
    const exported = ['A', 'B', 'C', 'E'].map((id) => mapped(row(id, 1, { color: id === 'C' ? 'red' : '' })))
    expect(await readStage(f, stage)).toEqual(exported)
    expect(await copiedRows(f, channel.id), 'one copy of each row, in the import stage').toEqual([])
    expect(await feedLines(f, channel.id)).toEqual([
      'sku,name,price,brand,color',
      ...exported.map((r) => `${r.sku},${r.name},${r.price},"Acme ""Outdoor"", Inc.",${r.color}`),
    ])

    // Import only: A changed, B deleted, D new, C and E untouched.
    expect((await f.upload(stream, [row('A', 2), row('D', 2)])).statusCode).toBe(202)
    expect((await f.deleteProducts(stream, ['B'])).statusCode).toBe(202)
    await runOk(f, 'import')
    expect(await copiedRows(f, channel.id), 'the rows the import changed keep what was exported').toEqual(['A', 'B'])
    expect(await readStage(f, stage), 'the channel stage is still the export').toEqual(exported)
    expect(await readStage(f, stage, `?filter=${encodeURIComponent("name = 'A v1'")}&fields=sku,price`)).toEqual([{ sku: 'A', price: '1.00' }])
    expect(await readStage(f, stage, `?filter=${encodeURIComponent("name = 'A v2'")}`)).toEqual([])

    await runOk(f, 'export-all')
    const afterSecond = [row('A', 2), row('C', 1, { color: 'red' }), row('D', 2), row('E', 1)].map(mapped)
    expect(await readStage(f, stage)).toEqual(afterSecond)
    expect(counts((await history(f, channel.id))[0])).toEqual([1, 1, 1, 2])

    // A second main source: the import stage is rebuilt whole from both; the channel stage stays as exported.
    const second = await f.createStream()
    expect((await f.upload(second, [row('C', 9), row('F', 9)])).statusCode).toBe(202)
    await f.attach(second)
    await runOk(f, 'import')
    expect(await readStage(f, stage)).toEqual(afterSecond)
    await runOk(f, 'export-all')
    const afterRebuild = [row('A', 2), row('C', 9), row('D', 2), row('E', 1), row('F', 9)].map(mapped)
    expect(await readStage(f, stage)).toEqual(afterRebuild)
    expect(counts((await history(f, channel.id))[0])).toEqual([1, 1, 0, 3])
    expect((await feedLines(f, channel.id)).slice(1)).toEqual(afterRebuild.map((r) => `${r.sku},${r.name},${r.price},"Acme ""Outdoor"", Inc.",${r.color}`))
  })

  it('compares a row changed and changed back as unchanged, and a row changed twice against what was exported', async () => {
    const { f, stream, channel, stage } = await mappedSite([row('A', 1), row('B', 1), row('C', 1)])
    expect((await f.upload(stream, [row('A', 2), row('B', 2)])).statusCode).toBe(202)
    await runOk(f, 'import')
    expect((await f.upload(stream, [row('A', 1), row('B', 3)])).statusCode).toBe(202)
    await runOk(f, 'import')
    expect(await readStage(f, stage)).toEqual([row('A', 1), row('B', 1), row('C', 1)].map(mapped))
    await runOk(f, 'export-all')
    expect(counts((await history(f, channel.id))[0])).toEqual([0, 1, 0, 2])
    expect(await readStage(f, stage)).toEqual([row('A', 1), row('B', 3), row('C', 1)].map(mapped))
    // And A refers again: its next change is compared with what was exported.
    expect((await f.upload(stream, [row('A', 4)])).statusCode).toBe(202)
    await runOk(f, 'import')
    expect(await readStage(f, stage, '?fields=sku,name')).toEqual([
      { sku: 'A', name: 'A v1' },
      { sku: 'B', name: 'B v3' },
      { sku: 'C', name: 'C v1' },
    ])
    await runOk(f, 'export-all')
    expect(counts((await history(f, channel.id))[0])).toEqual([0, 1, 0, 2])
  })

  it('reads with the mapping it was exported with after the mapping changes, and the next export compares the data both make', async () => {
    const { f, stream, channel, stage } = await mappedSite([row('A', 1), row('B', 1), row('C', 1)])
    // The constant changes and a column goes: every row's data changes, A's by the import as well.
    const mapping = [MAPPING[0], MAPPING[1], MAPPING[2], { column: 'brand', value: 'Acme' }]
    const updated = await f.platform('PUT', `/sites/${f.site.id}/channels/${channel.id}`, { mapping })
    expect(updated.statusCode, updated.body).toBe(200)
    expect((await f.upload(stream, [row('A', 2)])).statusCode).toBe(202)
    await runOk(f, 'import')
    expect(await readStage(f, stage), 'the stage as exported, by the old mapping').toEqual([row('A', 1), row('B', 1), row('C', 1)].map(mapped))
    await runOk(f, 'export-all')
    expect(counts((await history(f, channel.id))[0])).toEqual([0, 3, 0, 0])
    const now = [row('A', 2), row('B', 1), row('C', 1)].map((r) => ({ sku: r.id, name: r.title, price: r.price, brand: 'Acme' }))
    expect(await readStage(f, stage)).toEqual(now)
    expect(await feedLines(f, channel.id)).toEqual(['sku,name,price,brand', ...now.map((r) => `${r.sku},${r.name},${r.price},Acme`)])
    // Going back to the first mapping with nothing imported: every row modified again, and read as mapped now.
    const back = await f.platform('PUT', `/sites/${f.site.id}/channels/${channel.id}`, { mapping: MAPPING })
    expect(back.statusCode, back.body).toBe(200)
    await runOk(f, 'export-all')
    expect(counts((await history(f, channel.id))[0])).toEqual([0, 3, 0, 0])
    expect(await readStage(f, stage)).toEqual([row('A', 2), row('B', 1), row('C', 1)].map(mapped))
  })

  it('keeps the data of the rows its rules change, and lets the others refer, across imports', async () => {
    const { f, stream, channel, stage } = await mappedSite([row('A', 1), row('B', 1), row('C', 1)])
    // A channel rule that changes B's name only, and one that creates a column every row has.
    const onlyOf = (sku: string) => ({ all: [{ attribute: 'sku', operator: 'equals', value: sku }] })
    await addRule(f, { description: 'B renamed', attribute: 'name', if: onlyOf('B'), then: [{ action: 'set', value: 'Bee' }] }, channel.id)
    await addRule(f, { description: 'stock column', attribute: 'stock', if: onlyOf('C'), then: [{ action: 'set', value: '5' }] }, channel.id)
    await runOk(f, 'export-all')
    const withRules = (r: Row): Row => ({ ...mapped(r), ...(r.id === 'B' ? { name: 'Bee' } : {}), stock: r.id === 'C' ? '5' : '' })
    expect(await readStage(f, stage)).toEqual([row('A', 1), row('B', 1), row('C', 1)].map(withRules))
    expect(await copiedRows(f, channel.id), 'the rows the rules changed').toEqual(['B', 'C'])
    expect((await f.upload(stream, [row('A', 2), row('B', 2), row('C', 2)])).statusCode).toBe(202)
    await runOk(f, 'import')
    expect(await readStage(f, stage), 'still the export').toEqual([row('A', 1), row('B', 1), row('C', 1)].map(withRules))
    await runOk(f, 'export-all')
    // B's name is the rule's both times: only its price changed; A and C changed.
    expect(counts((await history(f, channel.id))[0])).toEqual([0, 3, 0, 0])
    expect(await readStage(f, stage)).toEqual([row('A', 2), row('B', 2), row('C', 2)].map(withRules))
    expect((await f.upload(stream, [row('D', 1)])).statusCode).toBe(202)
    await runOk(f, 'all')
    expect(counts((await history(f, channel.id))[0])).toEqual([1, 0, 0, 3])
    expect((await feedLines(f, channel.id)).slice(1)).toEqual(
      [row('A', 2), row('B', 2), row('C', 2), row('D', 1)]
        .map(withRules)
        .map((r) => `${r.sku},${r.name},${r.price},"Acme ""Outdoor"", Inc.",${r.color},${r.stock}`),
    )
  })

  it('reads a column a rule only names (to exclude by it) as the export wrote it, and counts nothing changed when nothing did', async () => {
    const stocked = (id: string, availability: string) => row(id, 1, { availability })
    const { f, stream, channel, stage } = await mappedSite([stocked('A', 'in stock'), stocked('B', 'in stock'), stocked('C', 'out of stock')])
    const outOfStock = { all: [{ attribute: 'availability', operator: 'equals', value: 'out of stock' }] }
    await addRule(f, { description: 'nothing out of stock', attribute: 'availability', if: outOfStock, then: [{ action: 'exclude' }] }, channel.id)
    await runOk(f, 'export-all')
    // The rule adds its attribute to the channel's columns; it writes no value in it.
    const exported = ['A', 'B'].map((id) => ({ ...mapped(row(id, 1)), availability: '' }))
    expect(await readStage(f, stage)).toEqual(exported)
    expect(await copiedRows(f, channel.id)).toEqual([])
    expect((await f.upload(stream, [stocked('B', 'in stock'), stocked('D', 'in stock')])).statusCode).toBe(202)
    await runOk(f, 'all')
    expect(counts((await history(f, channel.id))[0])).toEqual([1, 0, 0, 2])
    expect(await readStage(f, stage)).toEqual(['A', 'B', 'D'].map((id) => ({ ...mapped(row(id, 1)), availability: '' })))
    expect((await feedLines(f, channel.id)).slice(1)).toEqual(['A', 'B', 'D'].map((id) => `${id},${id} v1,1.00,"Acme ""Outdoor"", Inc.",,`))
  })

  it('reads a wide mapping of hostile names and values as exported: 120 columns, quotes, backslashes, commas, unicode', async () => {
    // More pairs than one jsonb_build_object call takes (50), and names and values a merchant's feed really has.
    const names = Array.from({ length: 120 }, (_, i) => (i % 4 === 0 ? `g:attr "${i}", \\x` : i % 4 === 1 ? `Größe_${i} ✓` : `col_${i}`))
    const wide = names.map((column, i): Mapped => (i % 3 === 2 ? { column, value: `const \\ "${i}", ü` } : { column, source: i % 2 === 0 ? 'title' : 'price' }))
    const { f, stream, channel, stage } = await mappedSite([row('A', 1), row('B', 1)], { mapping: wide })
    const made = (r: Row): Row => Object.fromEntries(wide.map((m): [string, string] => [m.column, 'value' in m ? m.value : (r[m.source] ?? '')]))
    expect(await readStage(f, stage)).toEqual([row('A', 1), row('B', 1)].map(made))
    expect(await copiedRows(f, channel.id)).toEqual([])
    expect((await f.upload(stream, [row('A', 2)])).statusCode).toBe(202)
    await runOk(f, 'import')
    expect(await readStage(f, stage), 'the export, by the mapping').toEqual([row('A', 1), row('B', 1)].map(made))
    await runOk(f, 'export-all')
    expect(counts((await history(f, channel.id))[0])).toEqual([0, 1, 0, 1])
    expect(await readStage(f, stage)).toEqual([row('A', 2), row('B', 1)].map(made))
    const lines = parseCsv((await feedLines(f, channel.id)).join('\n')) as string[][]
    expect(lines[0]).toEqual(names)
    expect(lines.slice(1)).toEqual([row('A', 2), row('B', 1)].map((r) => names.map((name) => made(r)[name] ?? '')))
  })
})
