import { parse as parseCsv } from 'csv-parse/sync'
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import { expect } from 'vitest'
import type { ImportFixture } from '../helpers/factories.js'
import type { TestContext } from '../helpers/test-app.js'

// Feed files and stages read back as rows, for the files that compare what an export wrote with
// what the stages hold.

export type Row = Record<string, string>
export type Format = 'csv' | 'tsv' | 'xml' | 'ndjson'

/** A row as a feed renders it: every output column, in order, '' where the row has no value. */
export function rendered(row: Row, columns: string[]): Row {
  return Object.fromEntries(columns.map((column) => [column, row[column] ?? '']))
}

const xmlParser = new XMLParser({ parseTagValue: false, isArray: (name) => name === 'item' })

/** A feed body as rows, each checked to carry exactly the columns, in order. */
export function parseFeed(format: Format, body: string, columns: string[], what: string): Row[] {
  let rows: Row[]
  if (format === 'csv' || format === 'tsv') {
    const [header, ...records] = parseCsv(body, { delimiter: format === 'csv' ? ',' : '\t' }) as string[][]
    expect(header, `${what}: header`).toEqual(columns)
    for (const record of records) expect(record, `${what}: fields per record`).toHaveLength(columns.length)
    rows = records.map((record) => Object.fromEntries(columns.map((column, i) => [column, record[i] ?? ''])))
  } else if (format === 'ndjson') {
    rows =
      body === ''
        ? []
        : body
            .replace(/\n$/, '')
            .split('\n')
            .map((line) => JSON.parse(line) as Row)
  } else {
    expect(XMLValidator.validate(body), `${what}: well-formed`).toBe(true)
    const parsed = xmlParser.parse(body) as { rss: { channel: { item?: Row[] } } }
    // An empty value writes no element: each item has the columns with a value, in order, none empty.
    rows = (parsed.rss.channel.item ?? []).map((item) => {
      const present = Object.keys(item)
      expect(present, `${what}: elements of ${JSON.stringify(item)}`).toEqual(columns.filter((column) => present.includes(column)))
      expect(
        Object.values(item).filter((value) => value.trim() === ''),
        `${what}: empty elements of ${JSON.stringify(item)}`,
      ).toEqual([])
      return rendered(item, columns)
    })
  }
  for (const row of rows) expect(Object.keys(row), `${what}: columns of ${JSON.stringify(row)}`).toEqual(columns)
  return rows
}

/** Every row of a stage through the product read API, page by page. */
export async function readStage(t: TestContext, f: ImportFixture, stage: string): Promise<{ columns: string[]; rows: Row[] }> {
  const base = `/product/v2/site/${f.site.id}/stage/${stage}`
  const properties = await t.request({ method: 'GET', url: `${base}/properties`, headers: f.account.platform })
  expect(properties.statusCode, properties.body).toBe(200)
  const { columns, products } = properties.json<{ columns: string[]; products: number }>()
  const rows: Row[] = []
  for (let offset = 0; ; offset += 1000) {
    const page = await t.request({ method: 'GET', url: `${base}?limit=1000&offset=${offset}`, headers: f.account.platform })
    expect(page.statusCode, page.body).toBe(200)
    const found = page.json<{ products: Row[] }>().products
    rows.push(...found)
    if (found.length < 1000) break
  }
  expect(rows, `${stage}: rows read against the properties' count`).toHaveLength(products)
  return { columns, rows }
}

/** One page of a stage's rows as the product read API answers `query` (a filter, fields, a limit). */
export async function stagePage(t: TestContext, f: ImportFixture, stage: string, query = ''): Promise<Row[]> {
  const response = await t.request({ method: 'GET', url: `/product/v2/site/${f.site.id}/stage/${stage}${query}`, headers: f.account.platform })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ products: Row[] }>().products
}

/** Runs `action` on the fixture's site and expects it to succeed. */
export async function runOk(f: ImportFixture, action: string): Promise<void> {
  const run = await f.run(action)
  expect(run.status, run.message).toBe('success')
}

/** An export history entry's counts: new, modified, deleted, unchanged. */
export function historyCounts(entry: Record<string, string> | undefined): number[] {
  return [entry?.product_count_new, entry?.product_count_modified, entry?.product_count_deleted, entry?.product_count_unchanged].map(Number)
}
