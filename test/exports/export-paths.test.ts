import { existsSync, mkdtempSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { gunzipSync } from 'node:zlib'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { parseFeed, readStage, rendered, type Format, type Row } from './feed-rows.js'
import { importFixture } from '../helpers/factories.js'
import { createChannel, download, history, readChannel, sourceBody } from '../helpers/clients.js'
import { feedPaths, oneSource } from '../helpers/responses.js'

// The paths of an export that small-update tests do not take (issue 13): a channel whose settings
// changed since its last export, several import-only runs between two exports, a full rebuild of the
// import stage (data sources added and removed), and full files whose first download comes late,
// starts with HEAD or a conditional GET, comes five at once, or finds the storage lost the file.
// Whatever path an export takes, its history counts must be what a full comparison of the previous
// export's rows with this export's rows gives, and every full file must be exactly the channel
// stage. Everything is observed through the public interfaces, except the one event only an
// operator causes (a file lost from the storage); the expected values come from a model of the
// streams, the site's data sources and the channels kept in this file.

// A directory of this file's own: one test removes a feed file from it.
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'export-paths-'))
const t = useTestApp({ ...HIGH_LIMITS, DATA_DIR: dataDir, FEED_STORAGE: 'local', RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })
afterAll(() => fs.rm(dataDir, { recursive: true, force: true }))

/** The rows of a channel's export by product id, as the channel exports them (before rendering). */
type Snapshot = Map<string, Row>
type DeltaType = 'new' | 'modified' | 'unchanged' | 'deleted'
/** How many rows of an export are new, modified, unchanged and deleted. */
type Sizes = [number, number, number, number]
type Step = { upload: Row[] } | { delete: string[] }
type Mapping = { column: string; source: string } | { column: string; value: string }
interface FileEntry {
  type: DeltaType | null
  filename: string
}

const GZIP = { 'accept-encoding': 'gzip' }
const pad = (i: number) => `P${String(i).padStart(4, '0')}`
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k)
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

/** Product i as first sent: its maker is its brand, except on every fourth row. */
function product(i: number): Row {
  const brand = BRANDS[i % 3] ?? 'Acme'
  return { id: pad(i), title: title(i), price: `${(i * 37) % 120}.50`, brand, maker: i % 4 === 0 ? 'Other' : brand }
}

/** Full files, or a full file and the delta files of these kinds, with this extension. */
function filesOf(ext: string, deltas: DeltaType[] = []): FileEntry[] {
  return [{ type: null, filename: `all.${ext}` }, ...deltas.map((type) => ({ type, filename: `${type}.${ext}` }))]
}
const DELTAS: DeltaType[] = ['new', 'modified', 'deleted']

// ---- the model

/** One stream's catalog as the uploads make it (an upload replaces a row whole). */
class StreamModel {
  readonly rows = new Map<string, Row>()
  /** Every attribute name the stream was sent, in first-seen order (the stream's columns). */
  readonly seen: string[] = []

  constructor(readonly id: string) {}

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

  /** Product i as the stream has it now (or as first sent), with these attributes changed. */
  changed(i: number, change: Row = {}): Row {
    return { ...(this.rows.get(pad(i)) ?? product(i)), ...change }
  }
}

interface SourceModel {
  id: number
  stream: StreamModel
  importType: 1 | 2
}

/** A site's import stage, from its active data sources (in id order) and their streams. */
class SiteModel {
  readonly sources: SourceModel[] = []

  /**
   * Main sources stacked (the later source wins on an equal id); an additional source adds its
   * attributes, all but its id, to the main row whose id it has.
   */
  rows(): Map<string, Row> {
    const stacked = new Map<string, Row>()
    for (const main of this.sources.filter((s) => s.importType === 1)) for (const [id, row] of main.stream.rows) stacked.set(id, row)
    const rows = new Map<string, Row>()
    for (const [id, row] of stacked) {
      let merged = { ...row }
      for (const addition of this.sources.filter((s) => s.importType === 2)) {
        const extra = Object.fromEntries(Object.entries(addition.stream.rows.get(row.id ?? '') ?? {}).filter(([key]) => key !== 'id'))
        merged = { ...merged, ...extra }
      }
      rows.set(id, merged)
    }
    return rows
  }

  /** The stage's columns: the sources' attribute names (main ones first), those some row has a value for. */
  columns(): string[] {
    const candidates: string[] = []
    const ordered = [...this.sources.filter((s) => s.importType === 1), ...this.sources.filter((s) => s.importType === 2)]
    for (const source of ordered) {
      for (const column of source.stream.seen) if (!(source.importType === 2 && column === 'id') && !candidates.includes(column)) candidates.push(column)
    }
    const rows = [...this.rows().values()]
    return candidates.filter((column) => rows.some((row) => (row[column] ?? '') !== ''))
  }
}

interface Settings {
  format: Format
  mapping: Mapping[]
  filter: string
  filenames: FileEntry[]
}

/** A channel as the test models it: its settings, the rows its filter keeps, and its last successful export. */
class ChannelModel {
  id = ''
  previous: Snapshot = new Map()

  constructor(
    readonly label: string,
    public settings: Settings,
    /** The channel's filter over an import row. */
    public keeps: (row: Row) => boolean = () => true,
  ) {}

  columns(site: SiteModel): string[] {
    return this.settings.mapping.length > 0 ? this.settings.mapping.map((m) => m.column) : site.columns()
  }

  /** The row the channel exports: without a mapping the import row as stored, else what the mapping makes of it. */
  exported(row: Row): Row {
    if (this.settings.mapping.length === 0) return { ...row }
    return Object.fromEntries(this.settings.mapping.map((m) => [m.column, 'source' in m ? (row[m.source] ?? '') : m.value]))
  }

  snapshot(site: SiteModel): Snapshot {
    const snapshot: Snapshot = new Map()
    for (const [id, row] of site.rows()) if (this.keeps(row)) snapshot.set(id, this.exported(row))
    return snapshot
  }
}

/** The full comparison: each product id of either export, classified by its exported row. */
function compare(previous: Snapshot, next: Snapshot): Record<DeltaType, string[]> {
  const kinds: Record<DeltaType, string[]> = { new: [], modified: [], unchanged: [], deleted: [] }
  for (const [id, row] of next) {
    const before = previous.get(id)
    kinds[before === undefined ? 'new' : isDeepStrictEqual(before, row) ? 'unchanged' : 'modified'].push(id)
  }
  for (const id of previous.keys()) if (!next.has(id)) kinds.deleted.push(id)
  return kinds
}

const sizesOf = (kinds: Record<DeltaType, string[]>): Sizes => [kinds.new.length, kinds.modified.length, kinds.unchanged.length, kinds.deleted.length]

/** Feed order is not what this file is about: rows are compared in the order of their values. */
function sorted(rows: Row[], columns: string[]): Row[] {
  const keyed = rows.map((row) => ({ row, key: JSON.stringify(columns.map((column) => row[column] ?? '')) }))
  return keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map(({ row }) => row)
}

/** The headers a HEAD must repeat from its GET. */
function entityHeaders(response: LightMyRequestResponse) {
  const h = response.headers
  return {
    status: response.statusCode,
    length: h['content-length'],
    etag: h.etag,
    lastModified: h['last-modified'],
    type: h['content-type'],
    encoding: h['content-encoding'],
  }
}

const request = (url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') => t.app.inject({ method, url, headers })

/** A site with a model of its streams and data sources, and the requests the tests make of it. */
async function scenario() {
  const f = await importFixture(t)
  const site = new SiteModel()
  const h = {
    f,
    site,
    /** A stream of the account (seeded: the streams are not what this file is about). */
    stream: async (): Promise<StreamModel> => new StreamModel(await f.createStream()),
    /** A data source of the site on the stream, through the platform API. */
    async attach(stream: StreamModel, importType: 1 | 2 = 1): Promise<SourceModel> {
      const body = sourceBody(stream.id, { import_type: importType, description: importType === 1 ? 'Main feed' : 'Additional feed' })
      const source: SourceModel = { id: oneSource(await f.c.post(`/sites/${f.site.id}/streams`, body), 201).id, stream, importType }
      site.sources.push(source)
      site.sources.sort((a, b) => a.id - b.id)
      return source
    },
    /** Removes the data source (`delete`) or pauses it: either way the next import leaves it out. */
    async detach(source: SourceModel, how: 'delete' | 'pause'): Promise<void> {
      const url = `/sites/${f.site.id}/streams/${source.id}`
      const response = how === 'delete' ? await f.c.del(url) : await f.c.put(url, { status: 'paused' })
      expect(response.statusCode, response.body).toBe(200)
      site.sources.splice(site.sources.indexOf(source), 1)
    },
    /** Sends the steps through the stream API, and applies them to the model. */
    async send(stream: StreamModel, steps: Step[]): Promise<void> {
      for (const step of steps) {
        const response = 'delete' in step ? await f.deleteProducts(stream.id, step.delete) : await f.upload(stream.id, step.upload)
        expect(response.statusCode, response.body).toBe(202)
        stream.apply(step)
      }
    },
    async channel(model: ChannelModel): Promise<ChannelModel> {
      model.id = (await createChannel(f, { name: model.label, ...model.settings })).id
      return model
    },
    /** Changes the channel's settings through the platform API (and the model's filter, when given). */
    async configure(model: ChannelModel, settings: Partial<Settings>, keeps?: (row: Row) => boolean): Promise<void> {
      const response = await f.platform('PUT', `/sites/${f.site.id}/channels/${model.id}`, settings)
      expect(response.statusCode, response.body).toBe(200)
      model.settings = { ...model.settings, ...settings }
      if (keeps) model.keeps = keeps
    },
    /**
     * A run that must succeed; returns its pid. The clock moves on first, so that each export's
     * files are of a later second than the previous ones (Last-Modified has seconds).
     */
    async run(action: string, body: Record<string, unknown> = {}): Promise<string> {
      t.clock.advance(5_000)
      const run = await f.run(action, body)
      expect(run.status, `${action}: ${run.message}`).toBe('success')
      return run.pid
    },
    /** The model is the site: its import stage as the product read API gives it. */
    async expectImportStage(what: string): Promise<void> {
      const columns = site.columns()
      const stage = await readStage(t, f, 'import')
      expect(stage.columns, `${what}: import stage columns`).toEqual(columns)
      const expected = [...site.rows().values()].map((row) => rendered(row, columns))
      expect(sorted(stage.rows, columns), `${what}: import stage rows`).toEqual(sorted(expected, columns))
    },
    /**
     * Checks the channel's export in run `pid` against the full comparison of its previous export's
     * rows with the rows the model gives now: the history counts, the channel stage as the product
     * read API gives it and, unless `files` is false (a test about first downloads), every file at
     * its URL. `planned` are the sizes the round was written for. Returns the export's columns and
     * rows in the order of their values, as the full file must parse.
     */
    async check(pid: string, model: ChannelModel, what: string, { planned, files = true }: { planned?: Sizes; files?: boolean } = {}) {
      const before = model.previous
      const next = model.snapshot(site)
      const columns = model.columns(site)
      const kinds = compare(before, next)
      if (planned) expect(sizesOf(kinds), `${what}: the round as planned`).toEqual(planned)
      const entry = (await history(f, model.id)).find((e) => e.pid === pid)
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

      const full = sorted(
        [...next.values()].map((row) => rendered(row, columns)),
        columns,
      )
      const stage = await readStage(t, f, `channel/${model.id}`)
      expect(stage.columns, `${what}: channel stage columns`).toEqual(columns)
      expect(sorted(stage.rows, columns), `${what}: channel stage rows`).toEqual(full)

      if (files) {
        // Feed URLs are listed in the order of the channel's filenames.
        const paths = feedPaths(await readChannel(f, model.id))
        expect(paths, `${what}: one URL per file`).toHaveLength(model.settings.filenames.length)
        for (const [i, file] of model.settings.filenames.entries()) {
          const response = await download(t, paths[i] ?? '')
          const name = `${what}, ${file.type ?? 'full'} file`
          expect(response.statusCode, name).toBe(200)
          const rows = sorted(parseFeed(model.settings.format, response.body, columns, name), columns)
          if (file.type === null) {
            expect(rows, name).toEqual(full)
          } else {
            // A deleted row is the previous export's row; every other kind is this export's.
            const source = file.type === 'deleted' ? before : next
            expect(rows, name).toEqual(
              sorted(
                kinds[file.type].map((id) => rendered(source.get(id) ?? {}, columns)),
                columns,
              ),
            )
          }
        }
      }
      model.previous = next
      return { columns, full }
    },
    /** The URL of the channel's full file (its first file). */
    async fullUrl(model: ChannelModel): Promise<string> {
      const [first] = feedPaths(await readChannel(f, model.id))
      expect(first, `${model.label}: a feed URL`).toBeDefined()
      return first ?? ''
    },
  }
  return h
}

/** Asserts a 200 whose body is the full file of these rows; returns the response. */
function expectFullFile(response: LightMyRequestResponse, format: Format, expected: { columns: string[]; full: Row[] }, what: string) {
  expect(response.statusCode, `${what}: ${response.body.slice(0, 200)}`).toBe(200)
  expect(response.headers['content-length'], `${what}: Content-Length`).toBe(String(response.rawPayload.length))
  const body = response.headers['content-encoding'] === 'gzip' ? gunzipSync(response.rawPayload).toString('utf8') : response.body
  expect(sorted(parseFeed(format, body, expected.columns, what), expected.columns), what).toEqual(expected.full)
  return response
}

// A mapping, a filter that rows move into and out of, and the model of that filter.
const MAPPED: Mapping[] = [
  { column: 'sku', source: 'id' },
  { column: 'name', source: 'title' },
  { column: 'price', source: 'price' },
  { column: 'brand', source: 'brand' },
]
const FILTER = "brand = 'Acme' OR price > 90"
const inFilter = (row: Row) => row.brand === 'Acme' || Number(row.price) > 90

describe('an export after the channel was changed', () => {
  it('counts what a full comparison of the rows the old and new settings make gives, and serves files made the new way', async () => {
    const h = await scenario()
    const stream = await h.stream()
    await h.attach(stream)
    const M1: Mapping[] = [
      { column: 'sku', source: 'id' },
      { column: 'name', source: 'title' },
      { column: 'price', source: 'price' },
    ]
    const channel = await h.channel(new ChannelModel('changing', { format: 'csv', mapping: M1, filter: '', filenames: filesOf('csv', DELTAS) }))
    // A channel of the same site whose settings stay: its exports in the same runs follow the import.
    const steady = await h.channel(new ChannelModel('steady', { format: 'ndjson', mapping: [], filter: '', filenames: filesOf('ndjson', ['modified']) }))

    // Each round: the settings changed before its run, the uploads, and the sizes the full
    // comparison gives for the changing channel, [new, modified, unchanged, deleted], written out so
    // that the model cannot drift into agreeing with an export that does nothing.
    const rounds: { name: string; planned: Sizes; settings?: Partial<Settings>; keeps?: (row: Row) => boolean; steps?: () => Step[] }[] = [
      { name: 'the first export', planned: [60, 0, 0, 0], steps: () => [{ upload: range(0, 60).map(product) }] },
      {
        name: 'a column added to the mapping',
        // Every row that stays gains the column: modified.
        planned: [1, 59, 0, 1],
        settings: { mapping: [...M1, { column: 'label', source: 'brand' }] },
        steps: () => [{ upload: [stream.changed(1, { price: '3.00' }), product(60)] }, { delete: [pad(2)] }],
      },
      {
        name: 'a column renamed',
        planned: [0, 60, 0, 0],
        settings: {
          mapping: [
            { column: 'sku', source: 'id' },
            { column: 'title', source: 'title' },
            { column: 'price', source: 'price' },
            { column: 'label', source: 'brand' },
          ],
        },
      },
      {
        name: 'the columns reordered',
        // The same rows, written in another column order.
        planned: [0, 0, 60, 0],
        settings: {
          mapping: [
            { column: 'label', source: 'brand' },
            { column: 'sku', source: 'id' },
            { column: 'price', source: 'price' },
            { column: 'title', source: 'title' },
          ],
        },
      },
      {
        name: "a column's source changed",
        // The maker differs from the brand on every fourth row only.
        planned: [0, 16, 44, 0],
        settings: {
          mapping: [
            { column: 'label', source: 'maker' },
            { column: 'sku', source: 'id' },
            { column: 'price', source: 'price' },
            { column: 'title', source: 'title' },
          ],
        },
      },
      {
        name: 'a filter set',
        planned: [0, 1, 28, 31],
        settings: { filter: 'price > 60' },
        keeps: (row) => Number(row.price) > 60,
        steps: () => [{ upload: [stream.changed(7, { price: '99.00' })] }],
      },
      {
        name: 'the filter changed',
        planned: [8, 0, 22, 7],
        settings: { filter: FILTER },
        keeps: inFilter,
      },
      {
        name: 'the format changed from csv to xml',
        planned: [0, 1, 29, 0],
        settings: { format: 'xml', filenames: filesOf('xml', DELTAS) },
        steps: () => [{ upload: [stream.changed(3, { title: 'Renamed three' })] }],
      },
      {
        name: 'the format changed from xml to ndjson',
        planned: [0, 0, 29, 1],
        settings: { format: 'ndjson', filenames: filesOf('ndjson', DELTAS) },
        steps: () => [{ delete: [pad(6)] }],
      },
      {
        name: 'the mapping and the filter removed',
        // Without a mapping a row is the import row: every row of the export is another object.
        planned: [30, 29, 0, 0],
        settings: { mapping: [], filter: '' },
        keeps: () => true,
      },
    ]
    for (const round of rounds) {
      if (round.settings) await h.configure(channel, round.settings, round.keeps)
      if (round.steps) await h.send(stream, round.steps())
      const pid = await h.run('all')
      await h.expectImportStage(round.name)
      await h.check(pid, channel, `${round.name}, changing channel`, { planned: round.planned })
      await h.check(pid, steady, `${round.name}, steady channel`)
    }

    // Changed and changed back between two exports: the channel stage was made the way this export
    // makes it, and only the row changed since counts.
    await h.configure(channel, { filter: FILTER, format: 'xml', filenames: filesOf('xml', DELTAS) }, inFilter)
    await h.configure(channel, { filter: '', format: 'ndjson', filenames: filesOf('ndjson', DELTAS) }, () => true)
    await h.send(stream, [{ upload: [stream.changed(8, { title: 'Renamed eight' })] }])
    const pid = await h.run('all')
    await h.check(pid, channel, 'settings changed and changed back, changing channel', { planned: [0, 1, 58, 0] })
    await h.check(pid, steady, 'settings changed and changed back, steady channel')
  }, 60_000)

  it('counts a row unchanged when a mapping of every stage column makes the same row of it as before', async () => {
    // The mapping lists the stage's columns in stage order, so before the stage gains a column it
    // passes every column through; the row it makes of P0003, which has no price, is
    // {id, title, price: ''} in every export: never modified.
    const h = await scenario()
    const stream = await h.stream()
    await h.attach(stream)
    const channel = await h.channel(
      new ChannelModel('every column', {
        format: 'csv',
        mapping: [
          { column: 'id', source: 'id' },
          { column: 'title', source: 'title' },
          { column: 'price', source: 'price' },
        ],
        filter: '',
        filenames: filesOf('csv', DELTAS),
      }),
    )
    const row = (i: number): Row => (i === 3 ? { id: pad(i), title: `Product ${i}` } : { id: pad(i), title: `Product ${i}`, price: `${i}.00` })
    await h.send(stream, [{ upload: range(0, 10).map(row) }])
    let pid = await h.run('all')
    await h.check(pid, channel, 'the first export', { planned: [10, 0, 0, 0] })

    // A column appears in the stage: the mapping no longer lists every stage column.
    await h.send(stream, [{ upload: [{ ...row(10), color: 'red' }] }])
    pid = await h.run('all')
    await h.expectImportStage('a column appears')
    await h.check(pid, channel, 'a column appears', { planned: [1, 0, 10, 0] })

    // It vanishes again: the mapping lists every stage column again.
    await h.send(stream, [{ delete: [pad(10)] }])
    pid = await h.run('all')
    await h.expectImportStage('the column vanishes')
    await h.check(pid, channel, 'the column vanishes', { planned: [0, 0, 10, 1] })
  })
})

describe('an export after several import-only runs', () => {
  it('counts the changes of every import since the channel was last exported, once, with action channel and export-all', async () => {
    const h = await scenario()
    const stream = await h.stream()
    await h.attach(stream)
    const plain = await h.channel(
      new ChannelModel('plain csv', { format: 'csv', mapping: [], filter: '', filenames: filesOf('csv', ['new', 'modified', 'unchanged', 'deleted']) }),
    )
    const mapped = await h.channel(
      new ChannelModel('mapped ndjson', { format: 'ndjson', mapping: MAPPED, filter: FILTER, filenames: filesOf('ndjson', DELTAS) }, inFilter),
    )
    const imports = async (rounds: (() => Step[])[]) => {
      for (const steps of rounds) {
        await h.send(stream, steps())
        await h.run('import')
      }
    }
    // The ids of these products that the stream has now (a deleted one is not sent again by mistake).
    const live = (from: number, to: number) => range(from, to).filter((i) => stream.rows.has(pad(i)))
    const historyLength = async (model: ChannelModel) => (await history(h.f, model.id)).length

    // 1,200 rows: enough for an import to change more than 1,000 of them (below).
    await h.send(stream, [{ upload: range(0, 1200).map(product) }])
    let pid = await h.run('all')
    await h.check(pid, plain, 'the first export, plain', { planned: [1200, 0, 0, 0] })
    await h.check(pid, mapped, 'the first export, mapped', { planned: [600, 0, 0, 0] })

    // Three imports without an export.
    await imports([
      () => [
        {
          upload: [
            stream.changed(1, { price: '2.00' }),
            stream.changed(2, { title: title(2, 1) }),
            stream.changed(3, { price: '1.00' }),
            stream.changed(8, { brand: 'Acme' }),
            product(5000),
          ],
        },
        { delete: [pad(4)] },
      ],
      () => [
        // Inserted in the previous import, deleted in this one: never part of an export.
        { delete: [pad(5000)] },
        // Changed in the previous import, changed back in this one: unchanged.
        { upload: [stream.changed(3, { price: product(3).price ?? '' }), stream.changed(1, { price: '95.00' }), product(5001)] },
      ],
      () => [
        // Deleted and sent again as it was, and sent again as it is: unchanged.
        { delete: [pad(6)] },
        { upload: [product(6), stream.changed(7)] },
        // Out of the mapped channel's filter in this import, back in the next.
        { upload: [stream.changed(9, { brand: 'Globex' })] },
      ],
    ])
    expect(await historyLength(plain), 'imports export nothing').toBe(1)
    pid = await h.run('channel', { id: plain.id })
    await h.expectImportStage('after three imports')
    await h.check(pid, plain, 'a channel export after three imports', { planned: [1, 4, 1195, 1] })
    expect(
      (await history(h.f, mapped.id)).find((e) => e.pid === pid),
      'action channel exports that channel only',
    ).toBeUndefined()

    // One more import; export-all: the plain channel counts it alone, the mapped one all four.
    await imports([() => [{ upload: [stream.changed(9, { brand: 'Acme' }), stream.changed(10, { title: title(10, 1) })] }, { delete: [pad(12)] }]])
    pid = await h.run('export-all')
    await h.expectImportStage('after a fourth import')
    await h.check(pid, plain, 'export-all after a fourth import, plain', { planned: [0, 2, 1197, 1] })
    await h.check(pid, mapped, 'export-all after four imports, mapped', { planned: [3, 0, 599, 1] })

    // One import changes more than 1,000 rows (on the mapped channel, only the prices show).
    await imports([
      () => [{ upload: live(100, 1150).map((i) => stream.changed(i, i % 10 === 0 ? { maker: 'Maker 2', price: '91.00' } : { maker: 'Maker 2' })) }],
    ])
    pid = await h.run('export-all')
    await h.expectImportStage('after an import of 1,050 changes')
    await h.check(pid, plain, 'after an import of 1,050 changes, plain', { planned: [0, 1050, 149, 0] })
    await h.check(pid, mapped, 'after an import of 1,050 changes, mapped', { planned: [52, 53, 549, 0] })

    // Imports whose changes add up to more than the stage has rows, some changed back, some
    // deleted and inserted.
    await imports([
      () => [{ upload: live(0, 500).map((i) => stream.changed(i, { price: '7.77' })) }],
      () => [{ upload: live(300, 800).map((i) => stream.changed(i, { title: title(i, 3) })) }],
      () => [
        { upload: live(0, 200).map((i) => stream.changed(i, { price: plain.previous.get(pad(i))?.price ?? '' })) },
        { delete: range(800, 850).map(pad) },
        { upload: range(6000, 6050).map(product) },
      ],
    ])
    pid = await h.run('export-all')
    await h.expectImportStage('after imports of more changes than the stage has rows')
    await h.check(pid, plain, 'after imports of more changes than rows, plain', { planned: [50, 600, 549, 50] })
    await h.check(pid, mapped, 'after imports of more changes than rows, mapped', { planned: [23, 266, 298, 90] })
  }, 60_000)
})

describe('an export after a full rebuild of the import stage', () => {
  it('counts exactly after a main or an additional data source is added to the site, and after it is removed again', async () => {
    const h = await scenario()
    const main = await h.stream()
    await h.attach(main)
    const plain = await h.channel(new ChannelModel('plain csv', { format: 'csv', mapping: [], filter: '', filenames: filesOf('csv', DELTAS) }))
    const mapped = await h.channel(
      new ChannelModel(
        'mapped xml',
        { format: 'xml', mapping: [...MAPPED, { column: 'stock', source: 'stock' }], filter: FILTER, filenames: filesOf('xml', DELTAS) },
        inFilter,
      ),
    )
    const exportAll = async (what: string, plainSizes: Sizes, mappedSizes: Sizes) => {
      const pid = await h.run('all')
      await h.expectImportStage(what)
      await h.check(pid, plain, `${what}, plain`, { planned: plainSizes })
      await h.check(pid, mapped, `${what}, mapped`, { planned: mappedSizes })
    }

    await h.send(main, [{ upload: range(0, 60).map(product) }])
    await exportAll('the first export', [60, 0, 0, 0], [28, 0, 0, 0])

    // A second main source, after the first: it wins on the ids both have. P0050-P0054 as they
    // are (unchanged, although P0052 changes in the first source, which no longer shows), P0055-
    // P0059 retitled, P0070-P0074 new.
    const second = await h.stream()
    await h.send(second, [
      {
        upload: [
          ...range(50, 55).map(product),
          ...range(55, 60).map((i) => ({ ...product(i), title: title(i, 7) })),
          ...range(70, 75).map((i) => ({ ...product(i), brand: 'Acme' })),
        ],
      },
    ])
    await h.send(main, [{ upload: [main.changed(1, { price: '3.00' }), main.changed(52, { price: '99.00' })] }])
    const secondSource = await h.attach(second)
    await exportAll('a second main source', [5, 6, 54, 0], [5, 3, 25, 0])

    // The second source removed: its rows go, the first source's show again; and a row deleted.
    await h.detach(secondSource, 'delete')
    await h.send(main, [{ delete: [pad(2)] }])
    await exportAll('the second main source removed', [0, 6, 53, 6], [1, 3, 25, 5])

    // The next import is incremental again.
    await h.send(main, [{ upload: [main.changed(3, { title: title(3, 1) })] }])
    await exportAll('an incremental import after the rebuild', [0, 1, 58, 0], [0, 1, 28, 0])

    // An additional source: a stock for three rows (one of them also gets a price that brings it
    // into the mapped channel's filter), and a row no main row has.
    const extra = await h.stream()
    await h.send(extra, [
      {
        upload: [
          { id: pad(10), stock: '5' },
          { id: pad(11), stock: '0', price: '99.00' },
          { id: pad(12), stock: '7' },
          { id: pad(999), stock: '1' },
        ],
      },
    ])
    const extraSource = await h.attach(extra, 2)
    await exportAll('an additional source', [0, 3, 56, 0], [1, 1, 28, 0])

    // Paused: the rows are the main source's again.
    await h.detach(extraSource, 'pause')
    await exportAll('the additional source paused', [0, 3, 56, 0], [0, 1, 28, 1])
  }, 60_000)
})

describe('full files written on their first download', () => {
  it('serves the latest export on a first download that comes two exports after the file was first recorded', async () => {
    const h = await scenario()
    const stream = await h.stream()
    await h.attach(stream)
    const csv = await h.channel(new ChannelModel('csv', { format: 'csv', mapping: [], filter: '', filenames: filesOf('csv') }))
    const xml = await h.channel(new ChannelModel('xml', { format: 'xml', mapping: MAPPED, filter: FILTER, filenames: filesOf('xml') }, inFilter))
    await h.send(stream, [{ upload: range(0, 80).map(product) }])
    let pid = await h.run('all')
    await h.check(pid, csv, 'the first export, csv', { files: false })
    await h.check(pid, xml, 'the first export, xml', { files: false })

    await h.send(stream, [{ upload: [stream.changed(1, { price: '99.00' }), stream.changed(3, { title: 'Second' }), product(100)] }, { delete: [pad(6)] }])
    pid = await h.run('all')
    await h.check(pid, csv, 'the second export, csv', { planned: [1, 2, 77, 1], files: false })
    await h.check(pid, xml, 'the second export, xml', { planned: [2, 1, 37, 1], files: false })

    await h.send(stream, [{ upload: [stream.changed(3, { title: 'Third' }), product(101)] }, { delete: [pad(9), pad(100)] }])
    pid = await h.run('all')
    const latest = [await h.check(pid, csv, 'the third export, csv', { planned: [1, 1, 77, 2], files: false })]
    latest.push(await h.check(pid, xml, 'the third export, xml', { planned: [0, 1, 37, 2], files: false }))

    for (const [i, model] of [csv, xml].entries()) {
      const url = await h.fullUrl(model)
      const identity = expectFullFile(await request(url), model.settings.format, latest[i] ?? { columns: [], full: [] }, `${model.label}: first download`)
      const gzip = expectFullFile(await request(url, GZIP), model.settings.format, latest[i] ?? { columns: [], full: [] }, `${model.label}: gzip`)
      expect(gunzipSync(gzip.rawPayload).equals(identity.rawPayload), `${model.label}: gzip decompressed is the identity body`).toBe(true)
    }
  })

  it('answers a HEAD on a file never downloaded with the Content-Length and ETag of the GET that follows', async () => {
    const h = await scenario()
    const stream = await h.stream()
    await h.attach(stream)
    const channel = await h.channel(new ChannelModel('csv', { format: 'csv', mapping: [], filter: '', filenames: filesOf('csv') }))
    await h.send(stream, [{ upload: range(0, 50).map(product) }])
    let pid = await h.run('all')
    let expected = await h.check(pid, channel, 'the first export', { files: false })
    const url = await h.fullUrl(channel)

    // Identity first, after the first export; gzip first, after the second.
    for (const [what, headers] of [
      ['identity', {}],
      ['gzip', GZIP],
    ] as const) {
      const head = await request(url, headers, 'HEAD')
      expect(head.statusCode, `${what}: HEAD`).toBe(200)
      expect(head.rawPayload.length, `${what}: HEAD has no body`).toBe(0)
      expect(head.headers['content-length'], `${what}: HEAD`).toMatch(/^\d+$/)
      expect(head.headers.etag, `${what}: HEAD`).toMatch(/^"/)
      const get = expectFullFile(await request(url, headers), 'csv', expected, `${what}: GET after HEAD`)
      expect(entityHeaders(head), `${what}: HEAD against GET`).toEqual(entityHeaders(get))

      await h.send(stream, [{ upload: [stream.changed(1, { title: 'Changed' }), product(60)] }])
      pid = await h.run('all')
      expected = await h.check(pid, channel, `the export after the ${what} HEAD`, { files: false })
    }
  })

  it('serves five full files of one account downloaded at once right after an export, each whole', async () => {
    const h = await scenario()
    const stream = await h.stream()
    await h.attach(stream)
    const models = [
      new ChannelModel('csv', { format: 'csv', mapping: [], filter: '', filenames: filesOf('csv') }),
      new ChannelModel('mapped csv', { format: 'csv', mapping: MAPPED, filter: FILTER, filenames: filesOf('csv') }, inFilter),
      new ChannelModel('tsv', { format: 'tsv', mapping: MAPPED, filter: '', filenames: filesOf('tsv') }),
      new ChannelModel('xml', { format: 'xml', mapping: MAPPED, filter: '', filenames: filesOf('xml') }),
      new ChannelModel('ndjson', { format: 'ndjson', mapping: [], filter: '', filenames: filesOf('ndjson') }),
    ]
    for (const model of models) await h.channel(model)
    await h.send(stream, [{ upload: range(0, 2000).map(product) }])
    for (const round of ['the first export', 'the second export']) {
      const pid = await h.run('all')
      // Each export's URL (a channel lists its files once it has exported them).
      const urls = await Promise.all(models.map((model) => h.fullUrl(model)))
      // Nothing downloaded these exports' files yet: all five are written on these requests, with
      // a gzip request for each beside the identity one.
      const [identity, gzip] = await Promise.all([Promise.all(urls.map((url) => request(url))), Promise.all(urls.map((url) => request(url, GZIP)))])
      for (const [i, model] of models.entries()) {
        const columns = model.columns(h.site)
        const want = {
          columns,
          full: sorted(
            [...model.snapshot(h.site).values()].map((row) => rendered(row, columns)),
            columns,
          ),
        }
        const plainBody = expectFullFile(identity[i] as LightMyRequestResponse, model.settings.format, want, `${round}, ${model.label}`)
        const gzipBody = expectFullFile(gzip[i] as LightMyRequestResponse, model.settings.format, want, `${round}, ${model.label}, gzip`)
        expect(gunzipSync(gzipBody.rawPayload).equals(plainBody.rawPayload), `${round}, ${model.label}: gzip decompressed is the identity body`).toBe(true)
        await h.check(pid, model, `${round}, ${model.label}`, { files: false })
      }
      await h.send(stream, [
        {
          upload: range(0, 2000)
            .filter((i) => i % 50 === 0)
            .map((i) => stream.changed(i, { title: title(i, 1) })),
        },
      ])
    }
  })

  it('writes a full file the storage lost again on its next download, whole and the same', async () => {
    const h = await scenario()
    const stream = await h.stream()
    await h.attach(stream)
    const channel = await h.channel(new ChannelModel('csv', { format: 'csv', mapping: [], filter: '', filenames: filesOf('csv', ['new']) }))
    await h.send(stream, [{ upload: range(0, 300).map(product) }])
    const pid = await h.run('all')
    const expected = await h.check(pid, channel, 'the first export', { files: false })
    const url = await h.fullUrl(channel)
    const first = expectFullFile(await request(url), 'csv', expected, 'the first download')
    const firstGzip = expectFullFile(await request(url, GZIP), 'csv', expected, 'the first gzip download')

    // Where the storage keeps the file and its gzip representation (DATA_DIR/feeds/<key>, and
    // .gzip/<name> beside it): the one thing of this file read outside the public interfaces.
    const rows = await t.db.selectFrom('feed_file').select(['storage_key', 'filename']).where('channel_id', '=', channel.id).execute()
    const key = rows.find((row) => row.filename === 'all.csv')?.storage_key ?? ''
    const file = path.join(dataDir, 'feeds', key)
    const gzipFile = path.join(path.dirname(file), '.gzip', path.basename(file))
    expect(existsSync(file) && existsSync(gzipFile), `the full file at ${file}`).toBe(true)

    // Lost, then asked for by an identity client, then by a gzip client.
    for (const [what, headers] of [
      ['identity', {}],
      ['gzip', GZIP],
    ] as const) {
      await fs.rm(file)
      await fs.rm(gzipFile)
      const again = expectFullFile(await request(url, headers), 'csv', expected, `lost, then a ${what} download`)
      const before = what === 'gzip' ? firstGzip : first
      expect(again.headers.etag, `lost, then a ${what} download: the same version`).toBe(before.headers.etag)
      expect(again.headers['last-modified'], `lost, then a ${what} download: the same version`).toBe(before.headers['last-modified'])
      expect(existsSync(file) && existsSync(gzipFile), `lost, then a ${what} download: written again`).toBe(true)
      const plain = expectFullFile(await request(url), 'csv', expected, `lost, then a ${what} download: identity`)
      expect(plain.rawPayload.equals(first.rawPayload), `lost, then a ${what} download: the same bytes`).toBe(true)
      const gzip = expectFullFile(await request(url, GZIP), 'csv', expected, `lost, then a ${what} download: gzip`)
      expect(gunzipSync(gzip.rawPayload).equals(first.rawPayload), `lost, then a ${what} download: gzip decompressed`).toBe(true)
    }
  })

  it("answers a conditional GET with the previous export's ETag with the new file, and the same rows after an export that changed nothing", async () => {
    const h = await scenario()
    const stream = await h.stream()
    await h.attach(stream)
    const channel = await h.channel(new ChannelModel('csv', { format: 'csv', mapping: [], filter: '', filenames: filesOf('csv') }))
    await h.send(stream, [{ upload: range(0, 100).map(product) }])
    let pid = await h.run('all')
    let expected = await h.check(pid, channel, 'the first export', { files: false })
    const url = await h.fullUrl(channel)
    const first = expectFullFile(await request(url), 'csv', expected, 'the first export')
    const firstGzip = expectFullFile(await request(url, GZIP), 'csv', expected, 'the first export, gzip')

    // Rows changed: each conditional request is the first download of the new file.
    await h.send(stream, [{ upload: [stream.changed(1, { price: '1.00' }), product(200)] }, { delete: [pad(2)] }])
    pid = await h.run('all')
    expected = await h.check(pid, channel, 'an export that changed rows', { planned: [1, 1, 98, 1], files: false })
    const second = expectFullFile(await request(url, { 'if-none-match': String(first.headers.etag) }), 'csv', expected, 'If-None-Match of the first export')
    expect(second.headers.etag).not.toBe(first.headers.etag)
    expect(second.rawPayload.equals(first.rawPayload)).toBe(false)
    const secondGzip = expectFullFile(
      await request(url, { ...GZIP, 'if-none-match': String(firstGzip.headers.etag) }),
      'csv',
      expected,
      'If-None-Match of the first export, gzip',
    )
    expect(gunzipSync(secondGzip.rawPayload).equals(second.rawPayload)).toBe(true)
    expectFullFile(
      await request(url, { 'if-modified-since': String(first.headers['last-modified']) }),
      'csv',
      expected,
      'If-Modified-Since of the first export',
    )
    expect((await request(url, { 'if-none-match': String(second.headers.etag) })).statusCode, 'the current ETag').toBe(304)

    // Nothing changed: a client holding the second export has its rows, whatever the validators say.
    pid = await h.run('all')
    expected = await h.check(pid, channel, 'an export that changed nothing', { planned: [0, 0, 100, 0], files: false })
    const third = await request(url, { 'if-none-match': String(second.headers.etag) })
    if (third.statusCode === 304) {
      expect(third.headers.etag, 'a 304 names the version the client has').toBe(second.headers.etag)
    } else {
      expectFullFile(third, 'csv', expected, 'If-None-Match of the second export, after an export that changed nothing')
      expect(third.rawPayload.equals(second.rawPayload), 'the same bytes').toBe(true)
    }
    const thirdGzip = await request(url, { ...GZIP, 'if-none-match': String(secondGzip.headers.etag) })
    if (thirdGzip.statusCode !== 304) {
      expectFullFile(thirdGzip, 'csv', expected, 'If-None-Match of the second export, gzip, after an export that changed nothing')
      expect(gunzipSync(thirdGzip.rawPayload).equals(second.rawPayload), 'the same bytes, decompressed').toBe(true)
    }
    const now = expectFullFile(await request(url), 'csv', expected, 'after an export that changed nothing')
    expect(now.rawPayload.equals(second.rawPayload), 'the same bytes').toBe(true)
  })
})
