import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture } from '../helpers/factories.js'
import { createChannel, history } from '../helpers/clients.js'
import { files, googleChannel } from '../templates/template-fixture.js'
import { historyCounts, runOk, type Row } from './feed-rows.js'

// A delta file says which products a partner must take again: a row is modified when what the feed
// says of it changed, whatever its data says. Found by a differential run (a channel exported through
// a history of changes against a fresh one): a change of the channel's currency rewrote every bare
// price in the full file while the rows' data stayed the same, and the export counted them unchanged;
// a value re-sent empty where it was missing changed the data but not one byte of the line, and the
// export counted it modified.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

const DELTAS = (extension: string) => [
  { type: null, filename: `feed-{channel_id}.${extension}` },
  { type: 'new', filename: `new-{channel_id}.${extension}` },
  { type: 'modified', filename: `modified-{channel_id}.${extension}` },
  { type: 'unchanged', filename: `unchanged-{channel_id}.${extension}` },
  { type: 'deleted', filename: `deleted-{channel_id}.${extension}` },
]

const product = (id: string, price: string, extra: Row = {}): Row => ({
  id,
  title: `Trail shoe ${id}`,
  description: `A light trail shoe, ${id}`,
  link: `https://shop.example.com/p/${id}`,
  image_link: `https://shop.example.com/i/${id}.jpg`,
  availability: 'in stock',
  price,
  brand: 'Acme',
  condition: 'new',
  ...extra,
})

/** The ids of a file's records (its header left out), in file order. */
const ids = (body: string | undefined) =>
  (body ?? '')
    .split('\n')
    .slice(1)
    .filter((line) => line !== '')
    .map((line) => line.split(/[\t,]/)[0])

async function siteWith(rows: Row[]) {
  const f = await importFixture(t)
  const stream = await f.createStream()
  await f.attach(stream)
  expect((await f.upload(stream, rows)).statusCode).toBe(202)
  return { f, stream }
}

describe('delta files and counts of an export', () => {
  it('count a row modified when the channel rewrites its value another way, though its data is the same', async () => {
    const { f } = await siteWith([product('P1', '19.50'), product('P2', '5.00 EUR'), product('P3', '7')])
    const channel = await googleChannel(f, { validation_mode: 'warn_only', filenames: DELTAS('tsv') })
    await runOk(f, 'all')
    expect((await files(t, f, channel.id)).full).toContain('19.50 EUR')

    const changed = await f.c.put(`/sites/${f.site.id}/channels/${channel.id}`, { currency: 'USD' })
    expect(changed.statusCode, changed.body).toBe(200)
    await runOk(f, 'export-all')
    const after = await files(t, f, channel.id)
    expect(after.full).toContain('19.50 USD')
    // [new, modified, deleted, unchanged]: the two bare prices now end in USD; P2 names its own currency.
    expect(historyCounts((await history(f, channel.id))[0])).toEqual([0, 2, 0, 1])
    expect(ids(after.modified)).toEqual(['P1', 'P3'])
    expect(after.modified).toContain('19.50 USD')
    expect(ids(after.unchanged)).toEqual(['P2'])
  })

  it('count a row modified when a channel whose lines were rendered on read starts rewriting its values', async () => {
    const { f } = await siteWith([product('P1', '19.50'), product('P2', '5.00 EUR', { availability: 'in_stock' })])
    const channel = await createChannel(f, { format: 'tsv', filenames: DELTAS('tsv') })
    await runOk(f, 'all')
    expect((await files(t, f, channel.id)).full).toContain('\tin stock\t')

    const google = { export_name: 'google_shopping', currency: 'EUR', validation_mode: 'warn_only' }
    const changed = await f.c.put(`/sites/${f.site.id}/channels/${channel.id}`, google)
    expect(changed.statusCode, changed.body).toBe(200)
    await runOk(f, 'export-all')
    const after = await files(t, f, channel.id)
    // P1's availability and bare price are written Google's way now; P2 was written so already.
    expect(historyCounts((await history(f, channel.id))[0])).toEqual([0, 1, 0, 1])
    expect(ids(after.modified)).toEqual(['P1'])
    expect(after.modified).toContain('19.50 EUR')
    expect(ids(after.unchanged)).toEqual(['P2'])
  })

  it.each(['csv', 'xml'] as const)('count only the rows with a value in a column the mapping adds or drops as modified: %s', async (format) => {
    const { f } = await siteWith([
      { id: 'A', title: 'Alpha', label: 'sale' },
      { id: 'B', title: 'Beta' },
      { id: 'C', title: 'Gamma', label: '' },
    ])
    const base = [
      { column: 'id', source: 'id' },
      { column: 'title', source: 'title' },
    ]
    const channel = await createChannel(f, { format, mapping: base, filenames: DELTAS(format) })
    await runOk(f, 'all')
    const remap = async (mapping: object[]) => {
      const changed = await f.c.put(`/sites/${f.site.id}/channels/${channel.id}`, { mapping })
      expect(changed.statusCode, changed.body).toBe(200)
      await runOk(f, 'export-all')
      return historyCounts((await history(f, channel.id))[0])
    }
    // Only A has a label: B's and C's values are the same in every column of either export.
    expect(await remap([...base, { column: 'label', source: 'label' }]), 'label added').toEqual([0, 1, 0, 2])
    const added = await files(t, f, channel.id)
    expect(added.modified).toContain('sale')
    expect(added.unchanged).toContain('Beta')
    expect(added.unchanged).not.toContain('Alpha')
    expect(await remap(base), 'label dropped').toEqual([0, 1, 0, 2])
  })

  it('count a row unchanged when its data changed but not its line: a value re-sent empty where it was missing', async () => {
    const { f, stream } = await siteWith([
      { id: 'A', title: 'Alpha', color: 'red' },
      { id: 'B', title: 'Beta' },
      { id: 'C', title: 'Gamma' },
    ])
    const csv = await createChannel(f, { format: 'csv', filenames: DELTAS('csv') })
    const ndjson = await createChannel(f, { format: 'ndjson', filenames: DELTAS('ndjson') })
    await runOk(f, 'all')
    const before = { csv: (await files(t, f, csv.id)).full, ndjson: (await files(t, f, ndjson.id)).full }

    // B's color sent empty (it had none): the same line. C's title changed: another line.
    expect(
      (
        await f.upload(stream, [
          { id: 'B', title: 'Beta', color: '' },
          { id: 'C', title: 'Gamma 2' },
        ])
      ).statusCode,
    ).toBe(202)
    await runOk(f, 'all')
    for (const channel of [csv, ndjson]) {
      expect(historyCounts((await history(f, channel.id))[0]), channel.format).toEqual([0, 1, 0, 2])
      const after = await files(t, f, channel.id)
      expect(after.modified, channel.format).toContain('Gamma 2')
      expect(after.modified, channel.format).not.toContain('Beta')
    }
    const csvAfter = (await files(t, f, csv.id)).full ?? ''
    expect(csvAfter.split('\n').filter((line) => line.startsWith('B,'))).toEqual((before.csv ?? '').split('\n').filter((line) => line.startsWith('B,')))
  })
})
