import { createServer, type Server } from 'node:http'
import { gunzipSync } from 'node:zlib'
import { parse as parseCsv } from 'csv-parse/sync'
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import { afterAll, describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { createChannel, download, history, readChannel } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'
import { feedPaths } from '../helpers/responses.js'

// The http destination below listens on loopback, which only an operator can allow.
const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0', ALLOW_PRIVATE_DESTINATIONS: 'true' })

async function siteWith(rows: object[]): Promise<{ f: ImportFixture; stream: string }> {
  const f = await importFixture(t)
  const stream = await f.createStream()
  await f.attach(stream)
  await f.upload(stream, rows)
  return { f, stream }
}

const ROWS = [
  { id: 'A', title: 'Shirt, "red"', price: '10.50', brand: 'Acme' },
  { id: 'B', title: 'Shoe\twith\ttabs', price: '20', brand: 'Globex' },
  { id: 'C', title: 'Line\nbreak', price: '5', brand: 'Acme' },
]

describe('export runs', () => {
  it('exports a CSV channel through all, serves it, and records deltas across three runs', async () => {
    const { f, stream } = await siteWith(ROWS)
    const channel = await createChannel(f, {
      format: 'csv',
      mapping: [
        { column: 'sku', source: 'id' },
        { column: 'title', source: 'title' },
        { column: 'price', source: 'price' },
        { column: 'condition', value: 'new' },
      ],
      filenames: [
        { type: null, filename: 'feed-{channel_id}.csv' },
        { type: 'new', filename: 'new.csv' },
        { type: 'deleted', filename: 'deleted.csv' },
      ],
    })
    const first = await f.run('all')
    expect(first.status, first.message).toBe('success')
    const [full, fresh, deleted] = feedPaths(await readChannel(f, channel.id))
    expect(full).toMatch(new RegExp(`/feeds/[A-Za-z0-9_-]{20,}/feed-${channel.id}\\.csv$`))
    const body = await download(t, full ?? '')
    expect(body.statusCode).toBe(200)
    expect(body.headers['content-type']).toMatch(/csv/)
    expect(parseCsv(body.body, { columns: true })).toEqual([
      { sku: 'A', title: 'Shirt, "red"', price: '10.50', condition: 'new' },
      { sku: 'B', title: 'Shoe\twith\ttabs', price: '20', condition: 'new' },
      { sku: 'C', title: 'Line\nbreak', price: '5', condition: 'new' },
    ])
    expect(parseCsv((await download(t, fresh ?? '')).body, { columns: true })).toHaveLength(3)
    expect((await download(t, deleted ?? '')).body.trim()).toBe('sku,title,price,condition')

    // Second run: one insert, one change, one delete.
    await f.upload(stream, [
      { id: 'A', title: 'Shirt v2', price: '11', brand: 'Acme' },
      { id: 'D', title: 'Sock', price: '3', brand: 'Acme' },
    ])
    await f.deleteProducts(stream, ['C'])
    expect((await f.run('all')).status).toBe('success')
    // Third run: nothing changed.
    expect((await f.run('all')).status).toBe('success')
    const entries = await history(f, channel.id)
    expect(
      entries.map((e) => [
        e.process_status,
        e.product_count_now,
        e.product_count_previous,
        e.product_count_new,
        e.product_count_modified,
        e.product_count_deleted,
        e.product_count_unchanged,
      ]),
    ).toEqual([
      ['success', '3', '3', '0', '0', '0', '3'],
      ['success', '3', '3', '1', '1', '1', '1'],
      ['success', '3', '0', '3', '0', '0', '0'],
    ])
    expect(entries[0]).toMatchObject({ site_id: f.site.id, site_channel_id: channel.id, uploaded: '1', product_count: '3' })
    const stageRead = await f.platform('GET', `/sites/${f.site.id}/channels/${channel.id}`)
    expect(stageRead.statusCode).toBe(200)
    const stage = await t.request({
      method: 'GET',
      url: `/product/v2/site/${f.site.id}/stage/channel/${channel.id}?fields=sku,price`,
      headers: f.account.platform,
    })
    expect(stage.json()).toEqual({
      success: true,
      products: [
        { sku: 'A', price: '11' },
        { sku: 'B', price: '20' },
        { sku: 'D', price: '3' },
      ],
    })
  })

  it('serves feed files with ETag, Last-Modified, 304 and gzip, without credentials', async () => {
    const { f } = await siteWith(ROWS)
    const channel = await createChannel(f, { format: 'ndjson' })
    expect((await f.run('all')).status).toBe('success')
    const [path] = feedPaths(await readChannel(f, channel.id))
    const first = await download(t, path ?? '')
    expect(first.statusCode).toBe(200)
    expect(
      first.body
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual(ROWS)
    const etag = String(first.headers.etag)
    expect((await download(t, path ?? '', { 'if-none-match': etag })).statusCode).toBe(304)
    expect((await download(t, path ?? '', { 'if-modified-since': String(first.headers['last-modified']) })).statusCode).toBe(304)
    const gzipped = await t.app.inject({ method: 'GET', url: path ?? '', headers: { 'accept-encoding': 'gzip' } })
    expect(gzipped.headers['content-encoding']).toBe('gzip')
    expect(gunzipSync(gzipped.rawPayload).toString('utf8')).toBe(first.body)
    expect((await download(t, `${path}x`)).statusCode).toBe(404)
  })

  it('applies the channel filter and writes well-formed XML', async () => {
    const { f } = await siteWith([...ROWS, { id: 'E', title: '<b>&amp; "quoted"</b>', price: '99', brand: 'Acme' }])
    const channel = await createChannel(f, {
      format: 'xml',
      filter: "brand = 'Acme' AND price > 6",
      mapping: [
        { column: 'g:id', source: 'id' },
        { column: 'title', source: 'title' },
        { column: 'g:price', source: 'price' },
      ],
    })
    expect((await f.run('all')).status).toBe('success')
    const [path] = feedPaths(await readChannel(f, channel.id))
    const xml = (await download(t, path ?? '')).body
    expect(XMLValidator.validate(xml)).toBe(true)
    const parsed = new XMLParser({ parseTagValue: false }).parse(xml) as { rss: { channel: { item: Record<string, string>[] | Record<string, string> } } }
    const items = [parsed.rss.channel.item].flat()
    expect(items).toEqual([
      { 'g:id': 'A', title: 'Shirt, "red"', 'g:price': '10.50' },
      { 'g:id': 'E', title: '<b>&amp; "quoted"</b>', 'g:price': '99' },
    ])
  })

  describe('an http destination', () => {
    let server: Server
    let status = 500
    const received: string[] = []
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

    it('receives every file, and its failure becomes a site error with uploaded = 0', async () => {
      server = createServer((request, response) => {
        let body = ''
        request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')))
        request.on('end', () => {
          if (status === 200) received.push(body)
          response.writeHead(status).end()
        })
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
      const address = server.address()
      const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/upload`
      const { f } = await siteWith(ROWS)
      const channel = await createChannel(f, { format: 'tsv', destinations: [{ type: 'http', url }] })
      status = 400
      const failed = await f.run('all')
      expect(failed.status).toBe('success')
      // Delivery follows the run: its failure arrives as a site error of the run that exported.
      const errors = await eventually(async () => {
        const found = await f.errors(failed.pid)
        return found.length > 0 ? found : undefined
      }, 'the failed push')
      expect(errors.map((e) => [e.error, e.type])).toEqual([['2003', 'Error']])
      expect((await history(f, channel.id))[0]).toMatchObject({ process_status: 'success', uploaded: '0' })
      status = 200
      const ok = await f.run('all')
      expect(ok.status).toBe('success')
      expect(await eventually(async () => ((await history(f, channel.id))[0]?.uploaded === '1' ? true : undefined), 'uploaded = 1')).toBe(true)
      expect(await f.errors(ok.pid)).toEqual([])
      expect(parseCsv(received[0] ?? '', { delimiter: '\t', columns: true })).toEqual(ROWS)
    })
  })

  it('runs one channel, or every channel of an export template, and skips inactive ones', async () => {
    const { f } = await siteWith(ROWS)
    const one = await createChannel(f, { name: 'one', export_name: 'tpl' })
    const two = await createChannel(f, { name: 'two', export_name: 'tpl' })
    const off = await createChannel(f, { name: 'off', export_name: 'other', active: false })
    expect((await f.run('import')).status).toBe('success')
    expect((await f.run('channel', { id: one.id })).status).toBe('success')
    expect(await history(f, one.id)).toHaveLength(1)
    expect(await history(f, two.id)).toHaveLength(0)
    expect((await f.run('export', { id: one.channel_id })).status).toBe('success')
    expect(await history(f, two.id)).toHaveLength(1)
    expect((await f.run('export-all')).status).toBe('success')
    expect(await history(f, off.id)).toHaveLength(0)
    const missing = await f.run('channel', { id: '999999' })
    expect(missing.status).toBe('failed')
    expect((await f.errors(missing.pid)).map((e) => e.error)).toEqual(['2004'])
  })
})
