import type { IncomingMessage, ServerResponse } from 'node:http'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { client } from '../helpers/clients.js'
import { startFeedServer, type FeedServer } from '../helpers/feed-server.js'

// Sites that fetch their catalog from a feed URL (issue 34), against a real HTTP server on a loopback
// port: every check goes through the platform interface (the sources, a run, the site's errors, the
// product reads) as an integrator would.

const t = useTestApp({
  ...HIGH_LIMITS,
  RUN_POLL_SECONDS: '0.5',
  SCHEDULER_INTERVAL_SECONDS: '0',
  ALLOW_PRIVATE_DESTINATIONS: 'true',
  SOURCE_FETCH_TIMEOUT_SECONDS: '3',
  SOURCE_IDLE_SECONDS: '2',
  SOURCE_MAX_BYTES: '1000000',
})

let feeds: FeedServer
beforeAll(async () => {
  feeds = await startFeedServer()
})
afterAll(async () => {
  await t.app.close()
  await feeds?.close()
})

interface SourceJson {
  id: number
  type: string
  url?: string
  auth?: { type: string; user?: string; name?: string } | null
  format?: string
  id_column?: string
  credentials?: string | null
  last_fetch: null | {
    outcome: string
    products: number | null
    refused_rows: number | null
    batch_id: string | null
    error: string | null
    errors: { message: string; occurrences: number; lines: number[]; example: string }[]
  }
}

let fileNo = 0
async function feedSource(f: ImportFixture, body: string | Buffer, extra: Record<string, unknown> = {}, name = `catalog-${++fileNo}.csv`) {
  feeds.file(`/${name}`, body)
  const response = await f.c.post(`/sites/${f.site.id}/sources`, { type: 'feed_url', url: `${feeds.origin}/${name}`, ...extra })
  expect(response.statusCode, response.body).toBe(201)
  return { source: response.json<{ Sources: SourceJson[] }>().Sources[0]!, path: `/${name}` }
}

async function sourceOf(f: ImportFixture, id: number): Promise<SourceJson> {
  const response = await f.c.get(`/sites/${f.site.id}/sources/${id}`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ Sources: SourceJson[] }>().Sources[0]!
}

async function imported(f: ImportFixture): Promise<Record<string, string>[]> {
  const run = await f.run('import')
  expect(run.status, run.message).toBe('success')
  return (await f.stage()).rows
}

// A CSV as shops export it: a byte order mark, CRLF line ends, `;` between values, quoted values with
// the separator, quotes and a line break inside, an id column named sku, and German decimals.
const SHOP_CSV =
  '\uFEFFsku;title;description;price\r\n' +
  'A-1;Shirt;"Cotton; soft";12,90 EUR\r\n' +
  'A-2;"Shoe ""Runner""";"Line one\r\nline two";59,00 EUR\r\n' +
  ';No id;"refused";1,00 EUR\r\n' +
  'A-3;Hat;;\r\n'

describe('feed URL sources', () => {
  it('imports a CSV with the hard cases, the chosen id column, and refused rows grouped by message with their lines', async () => {
    const f = await importFixture(t)
    const { source } = await feedSource(f, SHOP_CSV, { delimiter: ';', id_column: 'sku', description: 'shop export' })
    expect(source).toMatchObject({ type: 'feed_url', format: 'csv', id_column: 'sku', credentials: null, last_fetch: null })
    const rows = await imported(f)
    expect(rows).toEqual([
      { sku: 'A-1', title: 'Shirt', description: 'Cotton; soft', price: '12,90 EUR', id: 'A-1' },
      { sku: 'A-2', title: 'Shoe "Runner"', description: 'Line one\r\nline two', price: '59,00 EUR', id: 'A-2' },
      { sku: 'A-3', title: 'Hat', description: '', price: '', id: 'A-3' },
    ])
    const fetched = await sourceOf(f, source.id)
    expect(fetched.last_fetch).toMatchObject({ outcome: 'imported', products: 3, refused_rows: 1, error: null })
    // The refused record starts on file line 5: the header, two records, and a quoted line break before it.
    expect(fetched.last_fetch?.errors).toEqual([expect.objectContaining({ message: 'the id column "sku" is missing or empty', occurrences: 1, lines: [5] })])
    const errors = await f.errors()
    expect(errors.map((e) => e.error)).toContain('1008')
    expect(errors.find((e) => e.error === '1008')?.message).toContain('on line 5')
  })

  it('reads TSV, gzip by its bytes whatever the name, a Google RSS feed and an Atom feed with the g: namespace', async () => {
    const tsv = await importFixture(t)
    await feedSource(tsv, gzipSync('id\ttitle\tprice\nT1\tMug "classic"\t4.50 USD\nT2\tPlate\t3 USD\n'), {}, `plain-name-${++fileNo}.tsv`)
    expect(await imported(tsv)).toEqual([
      { id: 'T1', title: 'Mug "classic"', price: '4.50 USD' },
      { id: 'T2', title: 'Plate', price: '3 USD' },
    ])

    const rss = await importFixture(t)
    const feed = `<?xml version="1.0"?><rss version="2.0" xmlns:g="http://base.google.com/ns/1.0"><channel><title>Shop</title>
      <item><g:id>R1</g:id><title>Lamp &amp; shade</title><g:price>19.99 EUR</g:price><g:availability>in_stock</g:availability></item>
      <item><g:id>R2</g:id><title><![CDATA[Chair <b>oak</b>]]></title><g:price>89 EUR</g:price>
        <g:shipping><g:country>DE</g:country><g:price>4.95 EUR</g:price></g:shipping></item>
    </channel></rss>`
    const { source } = await feedSource(rss, feed, {}, `google-${++fileNo}.xml`)
    expect(source.format).toBe('xml')
    const rows = await imported(rss)
    expect(rows.map((row) => [row.id, row.title, row.price])).toEqual([
      ['R1', 'Lamp & shade', '19.99 EUR'],
      ['R2', 'Chair <b>oak</b>', '89 EUR'],
    ])

    const atom = await importFixture(t)
    const entries = `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom" xmlns:g="http://base.google.com/ns/1.0">
      <entry><id>tag:shop,1</id><g:id>E1</g:id><title>Vase</title><g:price>7 EUR</g:price></entry></feed>`
    await feedSource(atom, entries, { format: 'xml' }, `atom-${++fileNo}`)
    expect((await imported(atom)).map((row) => [row.id, row.title])).toEqual([['E1', 'Vase']])
  })

  it("reads a shop export in Windows-1252, declared by its server or not, and one with an old Mac's line ends", async () => {
    // "Café crème – “best”" and "9,99 €" in Windows-1252: the dash, the quotes and the euro sign are
    // where it differs from Latin-1.
    const bytes = Buffer.concat([
      Buffer.from('id;title;price\r\nW1;Caf\u00e9 cr\u00e8me ', 'latin1'),
      Buffer.from([0x96, 0x20, 0x93]),
      Buffer.from('best', 'latin1'),
      Buffer.from([0x94]),
      Buffer.from(';9,99 ', 'latin1'),
      Buffer.from([0x80, 0x0d, 0x0a]),
    ])
    const expected = [{ id: 'W1', title: 'Café crème – “best”', price: '9,99 €' }]
    for (const contentType of ['text/csv; charset=windows-1252', 'text/csv; charset=utf-8', 'text/plain']) {
      const f = await importFixture(t)
      const { path } = await feedSource(f, bytes, { delimiter: ';' })
      feeds.file(path, bytes, { contentType })
      expect(await imported(f), contentType).toEqual(expected)
    }
    // Only the server's charset tells ISO-8859-15 (0xA4 is "€") from Windows-1252 (where it is "¤").
    const latin9 = await importFixture(t)
    const latin9Bytes = Buffer.from('id;price\nL9;9,99 \u00a4\n', 'latin1')
    const { path } = await feedSource(latin9, latin9Bytes, { delimiter: ';' })
    feeds.file(path, latin9Bytes, { contentType: 'text/csv;charset="ISO-8859-15"' })
    expect(await imported(latin9)).toEqual([{ id: 'L9', price: '9,99 €' }])
    const mac = await importFixture(t)
    await feedSource(mac, 'id,title\rM1,Classic\rM2,"Quadra 700"\r')
    expect(await imported(mac)).toEqual([
      { id: 'M1', title: 'Classic' },
      { id: 'M2', title: 'Quadra 700' },
    ])
  })

  it('does not parse an unchanged file again: a 304 to its ETag, or the same bytes from a server without validators', async () => {
    const f = await importFixture(t)
    const name = `etag-${++fileNo}.csv`
    feeds.file(`/${name}`, 'id,title\nE1,One\n', { etag: '"v1"' })
    const created = await f.c.post(`/sites/${f.site.id}/sources`, { type: 'feed_url', url: `${feeds.origin}/${name}` })
    const id = created.json<{ Sources: SourceJson[] }>().Sources[0]!.id
    await imported(f)
    const first = await sourceOf(f, id)
    expect(first.last_fetch).toMatchObject({ outcome: 'imported', products: 1 })
    await imported(f)
    expect(feeds.requests.filter((r) => r.path === `/${name}`).at(-1)?.headers['if-none-match']).toBe('"v1"')
    expect((await sourceOf(f, id)).last_fetch).toMatchObject({ outcome: 'unchanged', batch_id: null })

    const plain = await importFixture(t)
    const { source, path } = await feedSource(plain, 'id,title\nP1,One\n')
    await imported(plain)
    await imported(plain)
    expect((await sourceOf(plain, source.id)).last_fetch).toMatchObject({ outcome: 'unchanged' })
    // A changed file is read again, and rows no longer in it leave the catalog.
    feeds.file(path, 'id,title\nP2,Two\n')
    expect(await imported(plain)).toEqual([{ id: 'P2', title: 'Two' }])
    expect((await sourceOf(plain, source.id)).last_fetch).toMatchObject({ outcome: 'imported', products: 1 })
  })

  it('keeps the previous data and says why when the source is slow, endless, too large, refused, gone, malformed or empty', async () => {
    const f = await importFixture(t)
    const { source, path } = await feedSource(f, 'id,title\nK1,Kept\n')
    await imported(f)
    const failures: [string, (req: IncomingMessage, res: ServerResponse) => void, RegExp][] = [
      ['endless', (_req, res) => endless(res), /did not finish within 3 s/],
      ['silent', () => undefined, /sent nothing for 2 s/],
      ['too large', (_req, res) => res.writeHead(200).end('id,title\n' + 'X,'.padEnd(1_100_000, 'y') + '\n'), /larger than 1000000 bytes/],
      ['refused', (_req, res) => res.writeHead(401, { 'www-authenticate': 'Basic' }).end('secret server text'), /answered HTTP 401 Unauthorized/],
      ['gone', (_req, res) => res.writeHead(404).end(), /answered HTTP 404 Not Found/],
      ['malformed', (_req, res) => res.writeHead(200).end('id,title\n"K2,unclosed\n'), /quote|closed/i],
      ['empty', (_req, res) => res.writeHead(200).end('id,title\n'), /holds no product/],
    ]
    for (const [name, handler, reason] of failures) {
      feeds.route(path, handler)
      const started = Date.now()
      const run = await f.run('import')
      expect(run.status, `${name}: ${run.message}`).toBe('success')
      expect(Date.now() - started, name).toBeLessThan(30_000)
      const fetched = await sourceOf(f, source.id)
      expect(fetched.last_fetch?.outcome, name).toBe('failed')
      expect(fetched.last_fetch?.error, name).toMatch(reason)
      expect(fetched.last_fetch?.error).not.toContain('secret server text')
      const error = (await f.errors(run.pid)).find((e) => e.error === '1007')
      expect(error?.message, name).toMatch(/previous data was kept/)
      expect((await f.stage()).rows, name).toEqual([{ id: 'K1', title: 'Kept' }])
    }
  }, 120_000)

  it('refuses alone a record nested too deeply, reports ids given twice with their lines, and keeps the later record', async () => {
    const f = await importFixture(t)
    const deep = `{"id":"J2","d":${'['.repeat(20_000)}${']'.repeat(20_000)}}`
    const { source } = await feedSource(f, `{"id":"J1","title":"one"}\n${deep}\n{"id":"J1","title":"again"}\n{"id":"J3"}\n`, {}, `deep-${++fileNo}.ndjson`)
    expect((await imported(f)).map((row) => [row.id, row.title])).toEqual([
      ['J1', 'again'],
      ['J3', undefined],
    ])
    const fetched = await sourceOf(f, source.id)
    expect(fetched.last_fetch).toMatchObject({ outcome: 'imported', products: 2, refused_rows: 1 })
    expect(fetched.last_fetch?.errors.map((e) => [e.message, e.lines])).toEqual([
      ['the line holds a value nested too deeply to keep as text', [2]],
      ['the id appears again further on; the later record is kept', [1]],
    ])
  })

  it('stops a file of nothing but blank lines at its deadline, and fails a redirect to something that is not a URL', async () => {
    const f = await importFixture(t)
    const { source, path } = await feedSource(f, 'id,title\nK1,Kept\n')
    await imported(f)
    feeds.route(path, (_req, res) => res.writeHead(200).end(gzipSync(Buffer.concat([Buffer.from('id,title\nK2,x\n'), Buffer.alloc(60_000_000, 10)]))))
    const started = Date.now()
    const run = await f.run('import')
    expect(Date.now() - started).toBeLessThan(30_000)
    expect(run.status).toBe('success')
    expect((await sourceOf(f, source.id)).last_fetch?.error).toMatch(/did not finish within 3 s/)
    feeds.route(path, (_req, res) => res.writeHead(301, { location: 'http://[::1' }).end())
    await f.run('import')
    expect((await sourceOf(f, source.id)).last_fetch?.error).toMatch(/redirected to something that is not a URL/)
    expect((await f.stage()).rows).toEqual([{ id: 'K1', title: 'Kept' }])
  }, 60_000)

  it('reads the file again after a change saved while a fetch was under way', async () => {
    const f = await importFixture(t)
    const slow = `/slow-${++fileNo}.csv`
    // Both servers label their files alike: the old fetch's validators must not make the new file look unchanged.
    feeds.route(slow, (_req, res) => void setTimeout(() => res.writeHead(200, { etag: '"same"' }).end('id,title\nOLD,from the old URL\n'), 1000))
    feeds.file(`/new-${fileNo}.csv`, 'id,title\nNEW,from the new URL\n', { etag: '"same"' })
    const created = await f.c.post(`/sites/${f.site.id}/sources`, { type: 'feed_url', url: `${feeds.origin}${slow}` })
    const id = created.json<{ Sources: SourceJson[] }>().Sources[0]!.id
    const started = await f.process({ action: 'import' })
    const pid = started.json<{ process_id: string }>().process_id
    await new Promise((resolve) => setTimeout(resolve, 300))
    const saved = await f.c.send('PUT', `/sites/${f.site.id}/sources/${id}`, { url: `${feeds.origin}/new-${fileNo}.csv` })
    expect(saved.statusCode, saved.body).toBe(200)
    await f.waitFor(pid)
    expect((await sourceOf(f, id)).last_fetch?.error).toMatch(/changed or deleted while it was fetched/)
    expect(await imported(f)).toEqual([{ id: 'NEW', title: 'from the new URL' }])
  })

  it('sends basic auth or one header only to the source origin, never shows them, and keeps them when saved again', async () => {
    const f = await importFixture(t)
    const name = `private-${++fileNo}.csv`
    feeds.route(`/${name}`, (req, res) => {
      if (req.headers.authorization !== `Basic ${Buffer.from('shop:pa55-word').toString('base64')}`) return void res.writeHead(401).end()
      res.writeHead(200).end('id,title\nB1,Basic\n')
    })
    const url = `${feeds.origin}/${name}`
    const created = await f.c.post(`/sites/${f.site.id}/sources`, { type: 'feed_url', url, auth: { type: 'basic', user: 'shop', password: 'pa55-word' } })
    expect(created.statusCode, created.body).toBe(201)
    expect(created.body).not.toContain('pa55-word')
    const source = created.json<{ Sources: SourceJson[] }>().Sources[0]!
    expect(source).toMatchObject({ auth: { type: 'basic', user: 'shop' }, credentials: 'stored' })
    expect(await imported(f)).toEqual([{ id: 'B1', title: 'Basic' }])
    // Saved again without the password: the same origin and user keep it.
    const saved = await f.c.send('PUT', `/sites/${f.site.id}/sources/${source.id}`, { url, auth: { type: 'basic', user: 'shop' }, description: 'renamed' })
    expect(saved.statusCode, saved.body).toBe(200)
    feeds.route(`/${name}`, (req, res) => res.writeHead(200).end(`id,title\nB1,${req.headers.authorization ? 'again' : 'none'}\n`))
    expect(await imported(f)).toEqual([{ id: 'B1', title: 'again' }])
    // Another origin does not get the stored password.
    const moved = await f.c.send('PUT', `/sites/${f.site.id}/sources/${source.id}`, {
      url: url.replace('127.0.0.1', 'localhost'),
      auth: { type: 'basic', user: 'shop' },
    })
    expect(moved.statusCode).toBe(400)
    expect(moved.json<{ message: string }>().message).toMatch(/^auth\.password: required/)

    const keyed = await importFixture(t)
    const header = `header-${++fileNo}.csv`
    feeds.route(`/${header}`, (req, res) => res.writeHead(req.headers['x-api-key'] === 'k3y' ? 200 : 403).end('id\nH1\nH2\n'))
    const withHeader = await keyed.c.post(`/sites/${keyed.site.id}/sources`, {
      type: 'feed_url',
      url: `${feeds.origin}/${header}`,
      auth: { type: 'header', name: 'X-Api-Key', value: 'k3y' },
    })
    expect(withHeader.body).not.toContain('k3y')
    expect((await imported(keyed)).map((row) => row.id)).toEqual(['H1', 'H2'])
    const listing = await keyed.c.get(`/sites/${keyed.site.id}/sources`)
    expect(listing.body).not.toContain('k3y')
    const activity = await keyed.c.get(`/sites/${keyed.site.id}/activity`)
    expect(activity.statusCode).toBe(200)
    expect(activity.body).not.toContain('k3y')
  })

  it('lists stream sources beside fetched ones, hides the fetched source’s stream, and answers 404 to another account', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    const { source } = await feedSource(f, 'id\nL1\n')
    const listing = (await f.c.get(`/sites/${f.site.id}/sources`)).json<{ Sources: SourceJson[] }>().Sources
    expect(listing.map((s) => s.type)).toEqual(['stream', 'feed_url'])
    // The stream endpoints keep showing stream sources only; the fetched source's stream is no stream of the interface.
    const streamSources = (await f.c.get(`/sites/${f.site.id}/streams`)).json<{ Sources: unknown[] }>().Sources
    expect(streamSources).toHaveLength(1)
    const streams = await t.request({ method: 'GET', url: '/streams', headers: f.account.bearer })
    expect(streams.json<{ data: { id: string }[] }>().data.map((s) => String(s.id))).toEqual([stream])

    const other = await client(t)
    for (const [method, body] of [['GET'], ['PUT', { url: `${feeds.origin}/x.csv` }], ['DELETE']] as const) {
      const response = await other.send(method, `/sites/${f.site.id}/sources/${source.id}`, body)
      expect(response.statusCode, `${method} ${response.body}`).toBe(404)
    }
    const deleted = await f.c.send('DELETE', `/sites/${f.site.id}/sources/${source.id}`)
    expect(deleted.statusCode).toBe(200)
    expect((await f.c.get(`/sites/${f.site.id}/sources/${source.id}`)).statusCode).toBe(404)
  })

  it('answers 400 naming the field for each mistake', async () => {
    const f = await importFixture(t)
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ url: 'http://x/a.csv' }, /^type: required/],
      [{ type: 'ftp' }, /^type: one of stream, feed_url, sftp/],
      [{ type: 'feed_url' }, /^url: required/],
      [{ type: 'feed_url', url: 'ftp://x/a.csv' }, /^url: an http or https URL/],
      [{ type: 'feed_url', url: 'http://u:p@x/a.csv' }, /^url: credentials go in auth/],
      [{ type: 'feed_url', url: `${feeds.origin}/catalog` }, /^format: one of csv, tsv, xml, ndjson, json \(the file name does not tell\)/],
      [{ type: 'feed_url', url: `${feeds.origin}/a.csv`, delimiter: ';;' }, /^delimiter: a single character/],
      [{ type: 'feed_url', url: `${feeds.origin}/a.xml`, delimiter: ';' }, /^delimiter: applies to csv and tsv/],
      [{ type: 'feed_url', url: `${feeds.origin}/a.csv`, auth: { type: 'basic', user: 'u' } }, /^auth\.password: required/],
      [{ type: 'feed_url', url: `${feeds.origin}/a.csv`, auth: { type: 'header', name: 'Host', value: 'v' } }, /^auth\.name: Host is set by the fetch/],
      [{ type: 'feed_url', url: `${feeds.origin}/a.csv`, host: 'x' }, /^host: belongs to an sftp source/],
      [
        { type: 'feed_url', url: `${feeds.origin}/a.csv`, auth: { type: 'header', name: 'X-Key', value: 'k€y' } },
        /^auth\.value: a header value holds ASCII and Latin-1/,
      ],
      [
        { type: 'feed_url', url: `${feeds.origin}/a.csv`, auth: { type: 'header', name: '__proto__', value: 'v' } },
        /^auth\.name: "__proto__" is not a header name/,
      ],
      [{ type: 'feed_url', url: `${feeds.origin}/a.csv`, stream_id: 1 }, /^stream_id: belongs to a stream source/],
      [{ type: 'sftp', host: '127.0.0.1', user: 'u', password: 'p', path: '/a.csv' }, /^host_key_sha256: required for SFTP/],
      [
        { type: 'sftp', host: '127.0.0.1', user: 'u', host_key_sha256: `SHA256:${'A'.repeat(43)}`, path: '/a.csv' },
        /^password: a password or private_key is required/,
      ],
      [{ type: 'feed_url', url: `${feeds.origin}/a.csv`, import_type: 3 }, /^import_type: must be 1/],
    ]
    for (const [body, message] of cases) {
      const response = await f.c.post(`/sites/${f.site.id}/sources`, body)
      expect(response.statusCode, JSON.stringify(body)).toBe(400)
      expect(response.json<{ message: string }>().message, JSON.stringify(body)).toMatch(message)
    }
    expect((await f.c.get(`/sites/${f.site.id}/sources`)).json<{ Sources: unknown[] }>().Sources).toEqual([])
  })
})

/** A body that never ends: a row every 100 ms, for as long as the client reads. */
function endless(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/csv' })
  res.write('id,title\n')
  let n = 0
  const timer = setInterval(() => {
    if (res.destroyed) return clearInterval(timer)
    res.write(`E${++n},row\n`)
  }, 100)
  res.on('close', () => clearInterval(timer))
}
