import { isDeepStrictEqual } from 'node:util'
import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { parseFeed, readStage, rendered, type Format, type Row } from './feed-rows.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { createChannel, download, history, readChannel } from '../helpers/clients.js'
import { feedPaths, type ChannelJson } from '../helpers/responses.js'

// Exports after small updates (issue 13): whatever an export does to avoid re-rendering and
// re-comparing unchanged rows, its history counts and its delta files must be what a full
// comparison of the previous export's rows with this export's rows gives, and every full file must
// be exactly the channel stage. Everything is observed through the public interfaces: rows go in
// through the stream API, counts come from the channel history, rows come out of the feed URLs and
// the product read API. The expected values come from a model of the catalog kept in this file.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

/** The rows of a channel's export by product id, as the channel exports them (before rendering). */
type Snapshot = Map<string, Row>
type DeltaType = 'new' | 'modified' | 'unchanged' | 'deleted'
/** How many rows of an export are new, modified, unchanged and deleted. */
type Sizes = [number, number, number, number]

/** What one round sends through the stream API, in this order. */
type Step = { upload: Row[] } | { delete: string[] }

/** A channel as the test models it: what it exports of a catalog row, and under which columns. */
interface ChannelModel {
  label: string
  format: Format
  body: Record<string, unknown>
  /** Its output columns, given the import stage's. */
  columns(stageColumns: string[]): string[]
  /** The row it exports for a catalog row, or undefined when its filter leaves the row out. */
  exported(row: Row): Row | undefined
}

const pad = (i: number) => `P${String(i).padStart(4, '0')}`
const BRANDS = ['Acme', 'Globex', 'Initech']

/** Values a CSV or XML writer must quote or escape, so a parser that reads them back proves the rendering. */
function title(i: number, version = 0): string {
  const suffix = version === 0 ? '' : ` v${version}`
  switch (i % 5) {
    case 0:
      return `Shirt ${i}, "red"${suffix}`
    case 1:
      return `Line\nbreak ${i}${suffix}`
    case 2:
      return `<b>&amp; ${i}</b>${suffix}`
    case 3:
      return `Tab\there ${i}${suffix}`
    default:
      return `Product ${i}${suffix}`
  }
}

function product(i: number): Row {
  const row: Row = { id: pad(i), title: title(i), price: `${(i * 37) % 120}.50`, brand: BRANDS[i % 3] ?? 'Acme', description: `Description of ${i}` }
  // The column that vanishes in a later round: only three rows ever have it.
  if (i === 10 || i === 20 || i === 30) row.note = 'limited edition'
  return row
}

// Every column of the import stage as it is, in stage order.
const plainCsv: ChannelModel = {
  label: 'csv without mapping',
  format: 'csv',
  body: {
    name: 'plain csv',
    format: 'csv',
    filenames: [
      { type: null, filename: 'all.csv' },
      { type: 'new', filename: 'new.csv' },
      { type: 'modified', filename: 'modified.csv' },
      { type: 'unchanged', filename: 'unchanged.csv' },
      { type: 'deleted', filename: 'deleted.csv' },
    ],
  },
  columns: (stageColumns) => stageColumns,
  // Without a mapping the exported row is the import row as stored: the attributes it has. A column
  // that appears or vanishes on other rows changes the header but not this row.
  exported: (row) => row,
}

// A mapping (a constant, a source that appears only in a later round) and a filter that rows move
// into and out of when their brand or price changes.
const MAPPING = [
  { column: 'sku', source: 'id' },
  { column: 'name', source: 'title' },
  { column: 'price', source: 'price' },
  { column: 'colour', source: 'color' },
  { column: 'condition', value: 'new' },
]
const FILTER = "brand = 'Acme' OR price > 90"
const mappedCsv: ChannelModel = {
  label: 'csv with mapping and filter',
  format: 'csv',
  body: {
    name: 'mapped csv',
    format: 'csv',
    mapping: MAPPING,
    filter: FILTER,
    filenames: [
      { type: null, filename: 'mapped.csv' },
      { type: 'new', filename: 'mapped-new.csv' },
      { type: 'modified', filename: 'mapped-modified.csv' },
      { type: 'deleted', filename: 'mapped-deleted.csv' },
    ],
  },
  columns: () => MAPPING.map((m) => m.column),
  exported: (row) =>
    row.brand === 'Acme' || Number(row.price) > 90
      ? { sku: row.id ?? '', name: row.title ?? '', price: row.price ?? '', colour: row.color ?? '', condition: 'new' }
      : undefined,
}

const plainXml: ChannelModel = {
  label: 'xml without mapping',
  format: 'xml',
  body: { name: 'plain xml', format: 'xml', filenames: [{ type: null, filename: 'all.xml' }] },
  columns: (stageColumns) => stageColumns,
  exported: (row) => row,
}

const plainNdjson: ChannelModel = {
  label: 'ndjson without mapping',
  format: 'ndjson',
  body: {
    name: 'plain ndjson',
    format: 'ndjson',
    filenames: [
      { type: null, filename: 'all.ndjson' },
      { type: 'modified', filename: 'modified.ndjson' },
    ],
  },
  columns: (stageColumns) => stageColumns,
  exported: (row) => row,
}

const CHANNELS = [plainCsv, mappedCsv, plainXml, plainNdjson]

/** The catalog as the uploads so far make it (docs/design.md 5.1: an upload replaces the row whole). */
class CatalogModel {
  readonly rows = new Map<string, Row>()
  /** Every attribute name ever uploaded, in first-seen order. */
  private readonly seen: string[] = []

  apply(step: Step): void {
    if ('delete' in step) {
      for (const id of step.delete) this.rows.delete(id)
      return
    }
    for (const row of step.upload) {
      for (const key of Object.keys(row)) if (!this.seen.includes(key)) this.seen.push(key)
      this.rows.set(row.id ?? '', { ...row })
    }
  }

  /** The import stage's columns: first-seen order, only those some row has a value for (docs/interface.md row rule 4). */
  columns(): string[] {
    return this.seen.filter((column) => [...this.rows.values()].some((row) => (row[column] ?? '') !== ''))
  }

  snapshot(channel: ChannelModel): Snapshot {
    const snapshot: Snapshot = new Map()
    for (const [id, row] of this.rows) {
      const exported = channel.exported(row)
      if (exported) snapshot.set(id, exported)
    }
    return snapshot
  }
}

/** The full comparison: each product id of either export, classified. */
function compare(previous: Snapshot, next: Snapshot): Record<DeltaType, string[]> {
  const kinds: Record<DeltaType, string[]> = { new: [], modified: [], unchanged: [], deleted: [] }
  for (const [id, row] of next) {
    const before = previous.get(id)
    kinds[before === undefined ? 'new' : isDeepStrictEqual(before, row) ? 'unchanged' : 'modified'].push(id)
  }
  for (const id of previous.keys()) if (!next.has(id)) kinds.deleted.push(id)
  return kinds
}

/** Feed order is not what this file is about: rows are compared in code-point order of their first column. */
function sorted(rows: Row[], columns: string[]): Row[] {
  const key = columns[0] ?? ''
  return [...rows].sort((a, b) => ((a[key] ?? '') < (b[key] ?? '') ? -1 : (a[key] ?? '') > (b[key] ?? '') ? 1 : 0))
}

/**
 * Checks one channel's export of run `pid` against the full comparison of `before` (the channel's
 * previous successful export) with `next` (this one): its history counts, its channel stage as the
 * product read API gives it, and every file at its URL.
 */
async function checkExport(
  f: ImportFixture,
  pid: string,
  channelId: string,
  model: ChannelModel,
  { what, columns, before, next }: { what: string; columns: string[]; before: Snapshot; next: Snapshot },
): Promise<void> {
  const kinds = compare(before, next)
  const entry = (await history(f, channelId)).find((e) => e.pid === pid)
  expect(entry, `${what}: history entry of run ${pid}`).toBeDefined()
  expect(
    {
      process_status: entry?.process_status,
      product_count: entry?.product_count,
      product_count_now: entry?.product_count_now,
      product_count_previous: entry?.product_count_previous,
      product_count_new: entry?.product_count_new,
      product_count_modified: entry?.product_count_modified,
      product_count_unchanged: entry?.product_count_unchanged,
      product_count_deleted: entry?.product_count_deleted,
    },
    `${what}: history counts`,
  ).toEqual({
    process_status: 'success',
    product_count: String(next.size),
    product_count_now: String(next.size),
    product_count_previous: String(before.size),
    product_count_new: String(kinds.new.length),
    product_count_modified: String(kinds.modified.length),
    product_count_unchanged: String(kinds.unchanged.length),
    product_count_deleted: String(kinds.deleted.length),
  })

  // The channel stage, read back: exactly this export's rows under its columns.
  const expectedFull = sorted(
    [...next.values()].map((row) => rendered(row, columns)),
    columns,
  )
  const stage = await readStage(t, f, `channel/${channelId}`)
  expect(stage.columns, `${what}: channel stage columns`).toEqual(columns)
  expect(sorted(stage.rows, columns), `${what}: channel stage rows`).toEqual(expectedFull)

  // Feed URLs are listed in the order of the channel's filenames.
  const paths = feedPaths(await readChannel(f, channelId))
  const files = model.body.filenames as { type: DeltaType | null }[]
  expect(paths, `${what}: one URL per file`).toHaveLength(files.length)
  for (const [i, file] of files.entries()) {
    const response = await download(t, paths[i] ?? '')
    const name = `${what}, ${file.type ?? 'full'} file`
    expect(response.statusCode, name).toBe(200)
    const rows = sorted(parseFeed(model.format, response.body, columns, name), columns)
    if (file.type === null) {
      expect(rows, name).toEqual(expectedFull)
      expect(rows, `${name} against the channel stage read`).toEqual(sorted(stage.rows, columns))
    } else {
      // A deleted row is the previous export's row; every other kind is this export's.
      const source = file.type === 'deleted' ? before : next
      const expected = kinds[file.type].map((id) => rendered(source.get(id) ?? {}, columns))
      expect(rows, name).toEqual(sorted(expected, columns))
    }
  }
}

/** A site with these channels on one stream, the model of its catalog, and each channel's last successful export. */
async function scenario(models: ChannelModel[]) {
  const f = await importFixture(t)
  const stream = await f.createStream()
  await f.attach(stream)
  const channels: { model: ChannelModel; channel: ChannelJson }[] = []
  for (const model of models) channels.push({ model, channel: await createChannel(f, model.body) })
  const catalog = new CatalogModel()
  const previous = new Map<ChannelModel, Snapshot>(models.map((model) => [model, new Map()]))
  return {
    f,
    channels,
    catalog,
    /** Sends the steps through the stream API, and applies them to the model. */
    async send(steps: Step[]) {
      for (const step of steps) {
        const response = 'delete' in step ? await f.deleteProducts(stream, step.delete) : await f.upload(stream, step.upload)
        expect(response.statusCode, response.body).toBe(202)
        catalog.apply(step)
      }
    },
    /** Product i as the catalog has it now (or as first sent), with these attributes changed. */
    changed: (i: number, change: Row): Row => ({ ...(catalog.rows.get(pad(i)) ?? product(i)), ...change }),
    /**
     * Checks the export of run `pid` of each channel that `sizes` names: first that the full
     * comparison gives the sizes the round was written for, then the export against it.
     */
    async check(pid: string, round: string, sizes: Map<ChannelModel, Sizes>) {
      for (const { model, channel } of channels.filter((c) => sizes.has(c.model))) {
        const what = `${round}, ${model.label}`
        const before = previous.get(model) ?? new Map<string, Row>()
        const next = catalog.snapshot(model)
        const kinds = compare(before, next)
        expect([kinds.new.length, kinds.modified.length, kinds.unchanged.length, kinds.deleted.length], `${what}: the round as planned`).toEqual(
          sizes.get(model),
        )
        await checkExport(f, pid, channel.id, model, { what, columns: model.columns(catalog.columns()), before, next })
        previous.set(model, next)
      }
    },
  }
}

describe('exports across small updates', () => {
  it('count and write what a full comparison gives, and serve full files that are exactly the channel stage', async () => {
    const { f, catalog, send, changed, check } = await scenario(CHANNELS)
    // Each round with the sizes its full comparison gives, [new, modified, unchanged, deleted], for
    // the channels without mapping and for the mapped one: written out so that the model cannot
    // drift into agreeing with an export that does nothing.
    const rounds: { name: string; plain: Sizes; mapped: Sizes; steps: () => Step[] }[] = [
      { name: 'the first export', plain: [200, 0, 0, 0], mapped: [99, 0, 0, 0], steps: () => [{ upload: Array.from({ length: 200 }, (_, i) => product(i)) }] },
      { name: 'inserts', plain: [12, 0, 200, 0], mapped: [4, 0, 99, 0], steps: () => [{ upload: Array.from({ length: 12 }, (_, i) => product(200 + i)) }] },
      {
        name: 'changes',
        plain: [0, 18, 194, 0],
        mapped: [5, 2, 100, 1],
        steps: () => [
          {
            upload: [
              // Prices: some cross the filter's price > 90 one way or the other.
              ...[1, 4, 7, 13, 16].map((i) => changed(i, { price: '95.00' })),
              ...[40, 43, 46].map((i) => changed(i, { price: '12.25' })),
              ...[50, 51, 52, 53].map((i) => changed(i, { title: title(i, 2) })),
              // Brands: into and out of the filter's brand = 'Acme'.
              changed(60, { brand: 'Globex' }),
              changed(61, { brand: 'Acme' }),
              changed(62, { brand: 'Acme' }),
              // Only an attribute the mapped channel leaves out: modified in the import, not in that channel.
              ...[63, 66, 69].map((i) => changed(i, { description: 'Rewritten description' })),
            ],
          },
        ],
      },
      {
        name: 'deletes',
        plain: [0, 0, 206, 6],
        mapped: [0, 0, 103, 4],
        steps: () => [
          { delete: [pad(3), pad(70), pad(71), pad(72), pad(150), pad(205)] },
          // Deleted and sent again as it was within the round: the catalog ends where it started.
          { delete: [pad(100)] },
          { upload: [changed(100, {})] },
          // Inserted and deleted within the round: never part of an export.
          { upload: [product(300)] },
          { delete: [pad(300)] },
        ],
      },
      {
        name: 'a column appears',
        // Without a mapping, only the rows that got the attribute are modified: the others keep their
        // row object, although their lines gain an empty field.
        plain: [1, 4, 202, 0],
        mapped: [1, 3, 100, 0],
        steps: () => [
          {
            upload: [
              changed(5, { color: 'red' }),
              changed(6, { color: 'blue' }),
              changed(9, { color: 'green' }),
              changed(12, { color: 'red' }),
              { ...product(301), color: 'black' },
            ],
          },
        ],
      },
      {
        name: 'a column vanishes',
        plain: [0, 3, 204, 0],
        // The mapping leaves the note out: modified in the import, unchanged in this channel.
        mapped: [0, 0, 104, 0],
        // The three rows with a note lose it (a row is replaced whole): no row has a value left.
        steps: () => [{ upload: [10, 20, 30].map((i) => Object.fromEntries(Object.entries(changed(i, {})).filter(([key]) => key !== 'note'))) }],
      },
      {
        name: 'rows sent again as they are',
        plain: [0, 0, 207, 0],
        mapped: [0, 0, 104, 0],
        steps: () => [
          {
            upload: [
              ...[80, 81, 82, 83, 84, 85, 86, 87, 88, 89].map((i) => changed(i, {})),
              // The same attributes in another order are the same row.
              ...[90, 91, 92, 93, 94].map((i) => Object.fromEntries(Object.entries(changed(i, {})).reverse())),
            ],
          },
          // Changed, then changed back before the next import.
          { upload: [changed(95, { price: '1.00' })] },
          { upload: [changed(95, {})] },
        ],
      },
      { name: 'nothing changed', plain: [0, 0, 207, 0], mapped: [0, 0, 104, 0], steps: () => [] },
    ]

    const seen = { appeared: false, vanished: false }
    for (const round of rounds) {
      const columnsBefore = catalog.columns()
      await send(round.steps())
      const run = await f.run('all')
      expect(run.status, `${round.name}: ${run.message}`).toBe('success')

      // The model is the catalog: the import stage as the product read API gives it.
      const stageColumns = catalog.columns()
      seen.appeared ||= stageColumns.some((column) => !columnsBefore.includes(column))
      seen.vanished ||= columnsBefore.some((column) => !stageColumns.includes(column))
      const importStage = await readStage(t, f, 'import')
      expect(importStage.columns, `${round.name}: import stage columns`).toEqual(stageColumns)
      expect(sorted(importStage.rows, stageColumns), `${round.name}: import stage rows`).toEqual(
        sorted(
          [...catalog.rows.values()].map((row) => rendered(row, stageColumns)),
          stageColumns,
        ),
      )
      await check(run.pid, round.name, new Map(CHANNELS.map((model) => [model, model === mappedCsv ? round.mapped : round.plain])))
    }
    // The rounds did what their names say, or the comparisons above proved less than they claim.
    expect(seen).toEqual({ appeared: true, vanished: true })
  }, 60_000)

  it('count an export after a failed one against the last export that succeeded', async () => {
    // XML with delta files; its columns are the import stage's, so an attribute whose name is no
    // XML element name fails its export (and only its export: the CSV channel takes any name).
    const xml: ChannelModel = {
      ...plainXml,
      label: 'xml without mapping, with delta files',
      body: {
        name: 'xml with deltas',
        format: 'xml',
        filenames: [
          { type: null, filename: 'all.xml' },
          { type: 'new', filename: 'new.xml' },
          { type: 'modified', filename: 'modified.xml' },
          { type: 'deleted', filename: 'deleted.xml' },
        ],
      },
    }
    const { f, channels, send, changed, check } = await scenario([xml, plainCsv])
    const xmlChannel = channels.find((c) => c.model === xml)?.channel ?? { id: '' }
    const filesOf = async (channelId: string) => Promise.all(feedPaths(await readChannel(f, channelId)).map(async (path) => (await download(t, path)).body))

    await send([{ upload: Array.from({ length: 40 }, (_, i) => product(i)) }])
    const first = await f.run('all')
    expect(first.status, first.message).toBe('success')
    await check(
      first.pid,
      'the first export',
      new Map([
        [xml, [40, 0, 0, 0]],
        [plainCsv, [40, 0, 0, 0]],
      ]),
    )
    const xmlFiles = await filesOf(xmlChannel.id)

    // Changes of every kind, and a row whose attribute name XML cannot carry.
    await send([
      { upload: [changed(1, { price: '1.00' }), changed(2, { title: 'Renamed' }), changed(3, { brand: 'Initech' }), product(100), product(101)] },
      { delete: [pad(5)] },
      { upload: [{ id: 'BAD', title: 'Odd one', 'bad name': 'v' }] },
    ])
    const failed = await f.run('all')
    expect(failed.status, failed.message).toBe('failed')
    expect((await history(f, xmlChannel.id)).find((e) => e.pid === failed.pid)?.process_status).toBe('failed')
    // The XML channel still serves the files of its first export, every one of them; the CSV
    // channel exported the changes.
    expect(await filesOf(xmlChannel.id)).toEqual(xmlFiles)
    await check(failed.pid, 'a failed XML export', new Map([[plainCsv, [3, 3, 36, 1]]]))

    // The row goes, with its column; one more change. The XML channel's delta is against its first
    // export: it includes the changes of the run whose export failed.
    await send([{ delete: ['BAD'] }, { upload: [changed(7, { price: '2.00' })] }])
    const recovered = await f.run('all')
    expect(recovered.status, recovered.message).toBe('success')
    await check(
      recovered.pid,
      'the export after the failed one',
      new Map([
        [xml, [2, 4, 35, 1]],
        [plainCsv, [0, 1, 40, 1]],
      ]),
    )
  })
})
