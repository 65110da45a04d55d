import { parse as parseCsv } from 'csv-parse/sync'
import { XMLParser } from 'fast-xml-parser'
import { expect } from 'vitest'
import { createChannel, download, readChannel } from '../../helpers/clients.js'
import { importFixture, type ImportFixture } from '../../helpers/factories.js'
import { feedPaths } from '../../helpers/responses.js'
import type { TestContext } from '../../helpers/test-app.js'
import type { Diagnostic, Summary } from '../template-fixture.js'
import type { TemplateJson } from '../template-examples.js'
import type { CorpusProduct } from './corpus-kit.js'

// A corpus through the platform's interfaces: one upload to one stream, a channel of the template
// per format, one run of `all`, then each channel's full and skipped files, its diagnostics read in
// pages of 1000 and its summary.

/** An XML item's elements (an element given several times is an array; a group element an object), or a CSV/TSV record. */
export type Element = string | Record<string, string> | (string | Record<string, string>)[]
export type Record_ = Record<string, Element>

export interface CorpusChannel {
  id: string
  format: string
  /** The full feed's records by the value of the key column (`id`, idealo's `sku`), without Google's `g:` prefix. */
  feed: Map<string, Record_>
  /** The skipped file's records by product id. */
  skipped: Map<string, Record<string, string>>
  diagnostics: Diagnostic[]
  summary: Summary
  /** The RSS <channel>'s own elements (format xml). */
  rss?: Record<string, unknown>
}

export interface CorpusRun {
  template: TemplateJson
  /** The channel's columns: the template's attributes the corpus has values for, in the template's order, each from the stream column of its name. */
  columns: string[]
  channels: Record<string, CorpusChannel>
}

const xmlParser = new XMLParser({ parseTagValue: false, trimValues: false, isArray: (name) => name === 'item' })

export function parseFeed(format: string, body: string, prefix = ''): { records: Record_[]; rss?: Record<string, unknown> } {
  if (format !== 'xml') return { records: parseCsv(body, { columns: true, delimiter: format === 'tsv' ? '\t' : ',' }) as Record_[] }
  const { rss } = xmlParser.parse(body) as { rss: { channel: Record<string, unknown> & { item?: Record<string, Element>[] } } }
  const unprefixed = (value: Element): Element =>
    Array.isArray(value) ? (value.map(unprefixed) as Record_[string]) : typeof value === 'string' ? value : strip(value as Record<string, string>)
  const strip = <T>(item: Record<string, T>) =>
    Object.fromEntries(Object.entries(item).map(([key, value]) => [prefix !== '' && key.startsWith(`${prefix}:`) ? key.slice(prefix.length + 1) : key, value]))
  const records = (rss.channel.item ?? []).map((item) => Object.fromEntries(Object.entries(strip(item)).map(([key, value]) => [key, unprefixed(value)])))
  const { item: _items, ...channel } = rss.channel
  return { records, rss: channel }
}

async function readDiagnostics(f: ImportFixture, channelId: string): Promise<Diagnostic[]> {
  const all: Diagnostic[] = []
  for (let offset = 0; ; offset += 1000) {
    const response = await f.c.get(`/sites/${f.site.id}/channels/${channelId}/diagnostics?limit=1000&offset=${offset}`)
    expect(response.statusCode, response.body).toBe(200)
    const { Diagnostics, meta } = response.json<{ Diagnostics: Diagnostic[]; meta: { total: number } }>()
    all.push(...Diagnostics)
    if (Diagnostics.length === 0 || all.length >= meta.total) return all
  }
}

async function readChannelRun(t: TestContext, f: ImportFixture, id: string, format: string, key: string, prefix: string): Promise<CorpusChannel> {
  const [full, skipped] = await Promise.all(
    feedPaths(await readChannel(f, id)).map(async (path) => {
      const response = await download(t, path)
      expect(response.statusCode, path).toBe(200)
      return response.body
    }),
  )
  const feed = parseFeed(format, full ?? '', prefix)
  const skippedRecords = parseFeed(format, skipped ?? '').records as Record<string, string>[]
  const summary = await f.c.get(`/sites/${f.site.id}/channels/${id}/diagnostics/summary`)
  expect(summary.statusCode, summary.body).toBe(200)
  return {
    id,
    format,
    feed: new Map(feed.records.map((record) => [String(record[key] ?? ''), record])),
    skipped: new Map(skippedRecords.map((record) => [record.id ?? '', record])),
    diagnostics: await readDiagnostics(f, id),
    summary: summary.json<{ Summary: Summary[] }>().Summary[0] as Summary,
    ...(feed.rss ? { rss: feed.rss } : {}),
  }
}

/**
 * Uploads the corpus to a new stream of a new site, creates a channel of `template` per entry of
 * `channels` (its body beside the mapping, the file names and currency EUR), runs `all` once and
 * reads every channel back. `key` is the feed column products are found by.
 */
export async function runCorpus(
  t: TestContext,
  template: string,
  products: CorpusProduct[],
  channels: Record<string, Record<string, unknown>>,
  key: string,
): Promise<CorpusRun> {
  const f = await importFixture(t, { title: `${template} corpus shop` })
  const described = await f.c.get(`/export_templates/${template}`)
  expect(described.statusCode, described.body).toBe(200)
  const description = described.json<{ ExportTemplates: TemplateJson[] }>().ExportTemplates[0] as TemplateJson
  const stream = await f.createStream()
  await f.attach(stream)
  const uploaded = await f.upload(
    stream,
    products.map((p) => p.row),
  )
  expect(uploaded.statusCode, uploaded.body).toBe(202)
  const sent = new Set(products.flatMap((p) => Object.keys(p.row)))
  const columns = description.attributes.map((a) => a.name).filter((name) => sent.has(name))
  const mapping = columns.map((column) => ({ column, source: column }))
  const ids: Record<string, string> = {}
  for (const [name, body] of Object.entries(channels)) {
    const format = String(body.format)
    const filenames = [
      { type: null, filename: `${template}-${name}-{channel_id}.${format}` },
      { type: 'skipped', filename: `${template}-${name}-skipped-{channel_id}.${format}` },
    ]
    ids[name] = (await createChannel(f, { name: `${template} ${name}`, export_name: template, currency: 'EUR', mapping, filenames, ...body })).id
  }
  const run = await f.run('all')
  expect(run.status, run.message).toBe('success')
  const prefix = template === 'google_shopping' ? 'g' : ''
  const read: Record<string, CorpusChannel> = {}
  for (const [name, id] of Object.entries(ids)) read[name] = await readChannelRun(t, f, id, String(channels[name]?.format), key, prefix)
  return { template: description, columns, channels: read }
}
