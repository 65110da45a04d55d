import { createHash } from 'node:crypto'
import { parse as parseCsv } from 'csv-parse/sync'
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contentTypeOf } from '../../src/feeds/feed-writer.js'
import { createRowsTable, openWriterFixture, writeAndRead, type WriterFixture } from './feed-writer-harness.js'

// Every format read back by a real parser and compared with the rows that went in.

const columns = ['g:id', 'title', 'description', 'price', 'note']
const rows: Record<string, Record<string, string>> = {
  p01: { 'g:id': 'p01', title: 'Plain', description: 'simple', price: '1.00', note: 'x' },
  p02: { 'g:id': 'p02', title: 'Comma, and "quotes"', description: 'line1\nline2\r\nline3\rend', price: '', note: 'tab\there' },
  p03: { 'g:id': 'p03', title: 'Ünïcödé 日本語 🎉', description: 'back\\slash \\n \\\\ literal \\', note: '' },
  p04: {
    'g:id': 'p04',
    title: `<b>&amp; tags</b> & more > less < 'single' "double"`,
    description: 'ctl\u0001\u0008\u000b\u000c\u001f\ufffe\uffffend',
    price: '\\.',
    note: '\\',
  },
  p05: { 'g:id': 'p05', title: '  leading and trailing  ', description: '"', price: ',', note: '\t' },
  p06: { 'g:id': 'p06' },
  p07: {},
}
const ids = Object.keys(rows).sort()
const expected = (clean: (value: string) => string = (v) => v) => ids.map((id) => columns.map((c) => clean(rows[id]?.[c] ?? '')))
// What XML 1.0 cannot carry is dropped from values.
// eslint-disable-next-line no-control-regex
const xmlClean = (value: string) => value.replace(/[\u0001-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')

let f: WriterFixture
let selectSql: string

beforeAll(async () => {
  f = await openWriterFixture()
  // Inserted out of order: files come out ordered by product_id.
  const shuffled = Object.fromEntries(Object.entries(rows).reverse())
  selectSql = await createRowsTable(f.client, 'feed_rows', shuffled)
})

afterAll(async () => {
  await f.close()
})

describe('feed writer', () => {
  it('writes CSV that a CSV parser reads back as the rows', async () => {
    const { text } = await writeAndRead(f, selectSql, columns, 'csv')
    const records = parseCsv(text, { relax_column_count: false }) as string[][]
    expect(records[0]).toEqual(columns)
    expect(records.slice(1)).toEqual(expected())
  })

  it('writes TSV with tabs, newlines and quotes inside values quoted', async () => {
    const { text } = await writeAndRead(f, selectSql, columns, 'tsv')
    const records = parseCsv(text, { delimiter: '\t' }) as string[][]
    expect(records[0]).toEqual(columns)
    expect(records.slice(1)).toEqual(expected())
    expect(text.split('\n')[1]).toBe('p01\tPlain\tsimple\t1.00\tx')
  })

  it('writes NDJSON: one object per row, keys in column order, every value a string', async () => {
    const { text } = await writeAndRead(f, selectSql, columns, 'ndjson')
    expect(text.endsWith('\n')).toBe(true)
    const lines = text.slice(0, -1).split('\n')
    expect(lines).toHaveLength(ids.length)
    const objects = lines.map((line) => JSON.parse(line) as Record<string, string>)
    for (const object of objects) expect(Object.keys(object)).toEqual(columns)
    expect(objects.map((o) => columns.map((c) => o[c]))).toEqual(expected())
    expect(objects[2]?.description).toBe('back\\slash \\n \\\\ literal \\')
  })

  it('writes a well-formed RSS feed whose items are the rows', async () => {
    const meta = { title: `Shop & "Co" <feeds> 'quoted'\r\n`, link: 'https://shop.example/?a=1&b=2', description: 'ctl\u0002 ünï' }
    const { text } = await writeAndRead(f, selectSql, columns, 'xml', meta)
    expect(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0"><channel>')).toBe(true)
    expect(XMLValidator.validate(text)).toBe(true)
    // fast-xml-parser decodes numeric character references (Postgres writes CR as &#x0d;) only with htmlEntities.
    const parser = new XMLParser({ parseTagValue: false, trimValues: false, ignoreAttributes: false, htmlEntities: true, isArray: (name) => name === 'item' })
    const doc = parser.parse(text) as { rss: { '@_version': string; channel: Record<string, unknown> & { item: Record<string, string>[] } } }
    expect(doc.rss['@_version']).toBe('2.0')
    const channel = doc.rss.channel
    expect([channel.title, channel.link, channel.description]).toEqual([meta.title, meta.link, 'ctl ünï'])
    // A value of blanks only (or nothing XML can carry) writes no element; every other is written as it is.
    const written = (value: string) => xmlClean(value).trim() !== ''
    expect(channel.item.map((item) => columns.map((c) => item[c] ?? ''))).toEqual(expected((v) => (written(v) ? xmlClean(v) : '')))
    for (const [i, item] of channel.item.entries()) {
      expect(Object.keys(item)).toEqual(columns.filter((c) => written(rows[ids[i] ?? '']?.[c] ?? '')))
    }
  })

  it('reports the bytes written and a strong ETag from their SHA-256', async () => {
    const { bytes, written } = await writeAndRead(f, selectSql, columns, 'csv')
    expect(written.bytes).toBe(bytes.length)
    expect(written.etag).toBe(`"${createHash('sha256').update(bytes).digest('hex').slice(0, 32)}"`)
    const again = await writeAndRead(f, selectSql, columns, 'csv')
    expect(again.written.etag).toBe(written.etag)
  })

  it('writes an empty feed when there are no rows', async () => {
    const none = `${selectSql} WHERE false`
    expect((await writeAndRead(f, none, columns, 'csv')).text).toBe('g:id,title,description,price,note\n')
    expect((await writeAndRead(f, none, columns, 'ndjson')).text).toBe('')
    const xml = (await writeAndRead(f, none, columns, 'xml')).text
    expect(XMLValidator.validate(xml)).toBe(true)
    expect(xml.endsWith('</description>\n</channel></rss>\n')).toBe(true)
  })

  it('names a content type per format', () => {
    expect(contentTypeOf('csv')).toBe('text/csv; charset=utf-8')
    expect(contentTypeOf('tsv')).toBe('text/tab-separated-values; charset=utf-8')
    expect(contentTypeOf('ndjson')).toMatch(/^application\/x-ndjson/)
    expect(contentTypeOf('xml')).toBe('application/xml; charset=utf-8')
  })
})
