import v8 from 'node:v8'
import vm from 'node:vm'
import { gzipSync } from 'node:zlib'
import { describe, expect, it, vi } from 'vitest'
import {
  parseSource,
  SourceFormatError,
  type SourceFormat,
  type SourceFormatOptions,
  type SourceLimits,
  type SourceRecord,
} from '../../src/sources/source-parsers.js'

// The parsers of catalog files fetched from a feed URL or SFTP (issue 34), as a library: every format
// read whole, in small chunks (a boundary anywhere: inside a multi-byte character, a CDATA section,
// a quoted CSV field, gzip's magic bytes) and gzipped, all of which must agree.

const LIMITS: SourceLimits = { maxLineBytes: 2_097_152, maxColumns: 1000, maxRows: 1_000_000 }

async function* chunked(data: Buffer | string, size = 65_536): AsyncGenerator<Buffer> {
  const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data)
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
}

async function parse(data: Buffer | string, format: SourceFormat, options: SourceFormatOptions = {}, limits = LIMITS, size?: number): Promise<SourceRecord[]> {
  const records: SourceRecord[] = []
  for await (const record of parseSource(chunked(data, size), format, options, limits)) records.push(record)
  return records
}

/** The records, checked to be the same whatever the chunk size and with the file gzipped. */
async function parseEveryWay(data: Buffer | string, format: SourceFormat, options: SourceFormatOptions = {}, limits = LIMITS): Promise<SourceRecord[]> {
  const whole = await parse(data, format, options, limits)
  expect(await parse(data, format, options, limits, 7)).toEqual(whole)
  expect(await parse(gzipSync(data), format, options, limits)).toEqual(whole)
  expect(await parse(gzipSync(data), format, options, limits, 1)).toEqual(whole)
  return whole
}

async function failure(
  data: Buffer | string,
  format: SourceFormat,
  options: SourceFormatOptions = {},
  limits = LIMITS,
  size?: number,
): Promise<SourceFormatError> {
  const error = await parse(data, format, options, limits, size).then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(SourceFormatError)
  return error as SourceFormatError
}

const GOOGLE_RSS = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0">
  <channel>
    <title>Example Shop – Produkte</title>
    <link>https://shop.example.com</link>
    <description>Alle Produkte &amp; Angebote</description>
    <item>
      <g:id>DE-1001</g:id>
      <title><![CDATA[Wanderschuh "Alpin" <Größe 42>]]></title>
      <description>Wasserdicht &amp; atmungsaktiv &#8211; mit Vibram&#174;-Sohle</description>
      <link>https://shop.example.com/p/1001?utm_source=google&amp;utm_medium=cpc</link>
      <g:image_link>https://cdn.example.com/1001/main.jpg</g:image_link>
      <g:additional_image_link>https://cdn.example.com/1001/side.jpg</g:additional_image_link>
      <g:additional_image_link>https://cdn.example.com/1001/back.jpg</g:additional_image_link>
      <g:price>129.95 EUR</g:price>
      <g:availability>in_stock</g:availability>
      <g:shipping>
        <g:country>DE</g:country>
        <g:region></g:region>
        <g:price>4.95 EUR</g:price>
      </g:shipping>
      <g:shipping>
        <g:country>AT</g:country>
        <g:region>9</g:region>
        <g:price>7.95 EUR</g:price>
      </g:shipping>
    </item>
    <item>
      <g:id>DE-1002</g:id>
      <title>Trekkingsocken 3er-Pack</title>
      <g:price>19.90 EUR</g:price>
      <g:sale_price></g:sale_price>
    </item>
  </channel>
</rss>
`

const ATOM = `<?xml version="1.0"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:g="http://base.google.com/ns/1.0">
  <title>Example Store</title>
  <link rel="self" href="https://store.example.com/feed.atom"/>
  <updated>2026-03-01T12:00:00Z</updated>
  <entry>
    <id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</id>
    <g:id>TV_123456</g:id>
    <title>LG 22LB4510 - 22" LED TV - 1080p (FullHD)</title>
    <link href="https://store.example.com/electronics/tv/22LB4510.html"/>
    <g:price>159 USD</g:price>
    <g:condition>new</g:condition>
  </entry>
  <entry>
    <g:id>TV_654321</g:id>
    <title>Samsung UE32 - 32" LED TV</title>
    <link href="https://store.example.com/electronics/tv/ue32.html"/>
    <g:price>249 USD</g:price>
  </entry>
</feed>
`

describe('XML feeds', () => {
  it('reads a Google Merchant RSS feed: g: attributes, CDATA, entities, repeated and nested elements', async () => {
    const records = await parseEveryWay(GOOGLE_RSS, 'xml')
    expect(records).toEqual([
      {
        line: 7,
        row: {
          id: 'DE-1001',
          title: 'Wanderschuh "Alpin" <Größe 42>',
          description: 'Wasserdicht & atmungsaktiv – mit Vibram®-Sohle',
          link: 'https://shop.example.com/p/1001?utm_source=google&utm_medium=cpc',
          image_link: 'https://cdn.example.com/1001/main.jpg',
          additional_image_link: 'https://cdn.example.com/1001/side.jpg,https://cdn.example.com/1001/back.jpg',
          price: '129.95 EUR',
          availability: 'in_stock',
          // Each shipping's leaves joined with ':' (an empty region kept in place), the repeats with ','.
          shipping: 'DE::4.95 EUR,AT:9:7.95 EUR',
        },
      },
      { line: 28, row: { id: 'DE-1002', title: 'Trekkingsocken 3er-Pack', price: '19.90 EUR', sale_price: '' } },
    ])
  })

  it("reads an Atom feed: a link's href, and g:id over the entry's own id", async () => {
    expect(await parseEveryWay(ATOM, 'xml')).toEqual([
      {
        line: 6,
        row: {
          id: 'TV_123456',
          title: 'LG 22LB4510 - 22" LED TV - 1080p (FullHD)',
          link: 'https://store.example.com/electronics/tv/22LB4510.html',
          price: '159 USD',
          condition: 'new',
        },
      },
      {
        line: 14,
        row: { id: 'TV_654321', title: 'Samsung UE32 - 32" LED TV', link: 'https://store.example.com/electronics/tv/ue32.html', price: '249 USD' },
      },
    ])
  })

  it("reads a description written as unescaped markup as its text, an Atom link by its rel, and an item element's own attributes", async () => {
    const rss = `<rss xmlns:g="http://base.google.com/ns/1.0"><channel><item>
      <g:id>M1</g:id>
      <g:description>Soft <b>cotton</b> shirt.<br/>Machine   washable <em>at 40 °C</em></g:description>
      <summary type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Great <em>value</em></div></summary>
      <g:shipping><g:country>DE</g:country><g:price>4.95 EUR</g:price></g:shipping>
    </item></channel></rss>`
    expect(await parseEveryWay(rss, 'xml')).toEqual([
      {
        line: 1,
        row: { id: 'M1', description: 'Soft cotton shirt.\nMachine washable at 40 °C', summary: 'Great value', shipping: 'DE:4.95 EUR' },
      },
    ])
    const atom = `<feed xmlns="http://www.w3.org/2005/Atom"><entry xml:lang="de">
      <id>A1</id><link rel="alternate" href="https://shop.example.com/a1"/><link rel="enclosure" href="https://img.example.com/a1.jpg"/>
    </entry></feed>`
    expect(await parseEveryWay(atom, 'xml')).toEqual([
      { line: 1, row: { id: 'A1', link: 'https://shop.example.com/a1', link_enclosure: 'https://img.example.com/a1.jpg' } },
    ])
    // Repeated URLs with commas of their own (an image CDN's transformations): those commas as %2C, as in Google's text feeds.
    const images =
      '<rss><channel><item><id>I1</id><additional_image_link>https://cdn.example.com/w_300,h_300/a.jpg</additional_image_link>' +
      '<additional_image_link>https://cdn.example.com/w_300,h_300/b.jpg</additional_image_link><image_link>https://cdn.example.com/c_fit,w_9/m.jpg</image_link>' +
      '<product_type>Apparel &gt; Shirts, Tops</product_type><product_type>Sale</product_type></item></channel></rss>'
    expect(await parseEveryWay(images, 'xml')).toEqual([
      {
        line: 1,
        row: {
          id: 'I1',
          additional_image_link: 'https://cdn.example.com/w_300%2Ch_300/a.jpg,https://cdn.example.com/w_300%2Ch_300/b.jpg',
          image_link: 'https://cdn.example.com/c_fit,w_9/m.jpg',
          product_type: 'Apparel > Shirts, Tops,Sale',
        },
      },
    ])
    const yml =
      '<yml_catalog><shop><offers><offer id="123" available="true"><name>Kettle</name><price>20</price></offer>' +
      '<offer id="attribute" available="false"><id>element</id></offer></offers></shop></yml_catalog>'
    expect(await parseEveryWay(yml, 'xml', { itemElement: 'offer' })).toEqual([
      { line: 1, row: { id: '123', available: 'true', name: 'Kettle', price: '20' } },
      { line: 1, row: { available: 'false', id: 'element' } },
    ])
  })

  it('reads the elements named itemElement, with or without their prefix', async () => {
    const xml = `<catalog xmlns:p="urn:shop"><p:product><sku>A1</sku><name>Mug</name></p:product><p:product><sku>A2</sku></p:product></catalog>`
    const expected = [
      { line: 1, row: { sku: 'A1', name: 'Mug' } },
      { line: 1, row: { sku: 'A2' } },
    ]
    expect(await parseEveryWay(xml, 'xml', { itemElement: 'product' })).toEqual(expected)
    expect(await parse(xml, 'xml', { itemElement: 'p:product' })).toEqual(expected)
    expect(await parse(xml, 'xml', { itemElement: 'x:product' })).toEqual([])
  })

  it("decodes the encoding an XML declaration names, else the server's charset, else Windows-1252 where the bytes are no UTF-8", async () => {
    const item = '<rss><channel><item><title>Größe</title></item></channel></rss>'
    const expected = [{ line: 1, row: { title: 'Größe' } }]
    expect(await parse(Buffer.from(`<?xml version="1.0" encoding="ISO-8859-1"?>${item}`, 'latin1'), 'xml')).toEqual(expected)
    expect(await parse(Buffer.from(`<?xml version="1.0" encoding="ISO-8859-1"?>${item}`, 'latin1'), 'xml', { charset: 'utf-8' })).toEqual(expected)
    expect(await parseEveryWay(Buffer.from(item, 'latin1'), 'xml', { charset: 'iso-8859-1' })).toEqual(expected)
    expect(await parseEveryWay(Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>${item}`, 'latin1'), 'xml')).toEqual(expected)
    expect(await parseEveryWay(Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>${item}`), 'xml', { charset: 'iso-8859-1' })).toEqual(expected)
  })

  it('refuses malformed XML with its line and column', async () => {
    const broken = GOOGLE_RSS.replace('<g:price>19.90 EUR</g:price>', '<g:price>19.90 EUR</g:prise>')
    const error = await failure(broken, 'xml')
    expect(error.message).toMatch(/^the XML is malformed at line 31, column \d+: unexpected close tag/)
    expect((await failure('<rss><channel><item><title>A &amp; &nbsp; B</title></item></channel></rss>', 'xml')).message).toMatch(
      /line 1, .*undefined entity &nbsp; \(XML defines only &amp; &lt; &gt; &quot; &apos;, not HTML's names\)/,
    )
    expect((await failure('<rss><channel><item><title>cut off', 'xml')).message).toMatch(/unclosed tag/)
  })

  it('refuses a DOCTYPE that declares entities (billion laughs), and expands no entity a DTD declares', async () => {
    const lol = ['<!ENTITY lol "lol">', ...Array.from({ length: 9 }, (_, n) => `<!ENTITY lol${n + 1} "${`&lol${n || ''};`.repeat(10)}">`)]
    const laughs = `<?xml version="1.0"?>\n<!DOCTYPE lolz [\n ${lol.join('\n ')}\n]>\n<rss><channel><item><title>&lol9;</title></item></channel></rss>`
    const started = Date.now()
    expect((await failure(laughs, 'xml')).message).toMatch(/declares entities in its DOCTYPE/)
    expect((await failure(gzipSync(laughs), 'xml')).message).toMatch(/declares entities/)
    expect(Date.now() - started).toBeLessThan(2000)
    // Without the check, saxes itself would not expand it: an entity it was never told of is an error.
    const undeclared = '<!DOCTYPE rss>\n<rss><channel><item><title>&lol9;</title></item></channel></rss>'
    expect((await failure(undeclared, 'xml')).message).toMatch(/line 2, .*undefined entity &lol9;/)
    // A DOCTYPE without entities is harmless.
    expect(await parse('<!DOCTYPE rss>\n<rss><channel><item><g:id>1</g:id></item></channel></rss>', 'xml')).toEqual([{ line: 2, row: { id: '1' } }])
  })
})

describe('CSV and TSV', () => {
  it('reads a semicolon CSV with a BOM, CRLF, quoted newlines and doubled quotes', async () => {
    const csv =
      '\uFEFF id ;title;description;price\r\n' +
      'SKU-1;"Kaffeebecher ""Classic""";"Steingut,\r\nspülmaschinenfest; 350 ml";"8,90 EUR"\r\n' +
      'SKU-2;Teekanne;"Glas\r\n\r\nmit Sieb";24,50 EUR\r\n' +
      '\r\n' +
      'SKU-3;Untersetzer;;3,00 EUR\r\n' +
      '\r\n\r\n'
    expect(await parseEveryWay(csv, 'csv', { delimiter: ';' })).toEqual([
      { line: 2, row: { id: 'SKU-1', title: 'Kaffeebecher "Classic"', description: 'Steingut,\r\nspülmaschinenfest; 350 ml', price: '8,90 EUR' } },
      { line: 4, row: { id: 'SKU-2', title: 'Teekanne', description: 'Glas\r\n\r\nmit Sieb', price: '24,50 EUR' } },
      { line: 8, row: { id: 'SKU-3', title: 'Untersetzer', description: '', price: '3,00 EUR' } },
    ])
  })

  it('ends a line at CRLF, LF, a lone CR (an old Mac) or CR CR LF (a CSV written in text mode on Windows), counting each once', async () => {
    const expected = [
      { line: 2, row: { id: 'A', title: 'Shirt', price: '10' } },
      { line: 3, error: 'the record has 2 fields, the header has 3', excerpt: 'B,Socks' },
      { line: 4, row: { id: 'C', title: 'Scarf', price: '' } },
    ]
    for (const end of ['\r\n', '\n', '\r', '\r\r\n']) {
      const csv = ['id,title,price', 'A,Shirt,10', 'B,Socks', 'C,"Scarf",'].join(end) + end
      expect(await parseEveryWay(csv, 'csv'), JSON.stringify(end)).toEqual(expected)
    }
  })

  it('reads a CSV in the charset its server declared, Windows-1252 where nothing names one and its first bytes are no UTF-8, UTF-16 by its mark', async () => {
    const text = 'id,title,price\nM1,Café crème – “best”,9.99 €\n'
    const expected = [{ line: 2, row: { id: 'M1', title: 'Café crème – “best”', price: '9.99 €' } }]
    const windows1252 = encodeWindows1252(text)
    expect(await parseEveryWay(windows1252, 'csv')).toEqual(expected)
    // A server's default charset=utf-8 does not make Windows-1252 bytes UTF-8.
    expect(await parseEveryWay(windows1252, 'csv', { charset: 'utf-8' })).toEqual(expected)
    expect(await parseEveryWay(windows1252, 'csv', { charset: 'windows-1252' })).toEqual(expected)
    const latin9 = Buffer.from('id;Preis\n1;9,99 \u00a4\n', 'latin1')
    expect(await parse(latin9, 'csv', { delimiter: ';', charset: 'ISO-8859-15' })).toEqual([{ line: 2, row: { id: '1', Preis: '9,99 €' } }])
    // A charset no decoder knows says nothing: the bytes decide.
    expect(await parse(windows1252, 'csv', { charset: 'binary' })).toEqual(expected)
    const utf16be = Buffer.from(`\ufeff${text}`, 'utf16le').swap16()
    const utf16le = Buffer.from(`\ufeff${text}`, 'utf16le')
    for (const bytes of [utf16be, utf16le]) expect(await parseEveryWay(bytes, 'csv', { charset: 'utf-8' })).toEqual(expected)
  })

  it('keeps a UTF-8 CSV UTF-8: a character cut by the end of the first 64 KB, a stray byte past them', async () => {
    const head = 'id,title\nA,'
    // "ü" takes the 65,536th and 65,537th bytes: the head the encoding is chosen from ends inside it.
    const first = `${head}${'x'.repeat(65_535 - head.length)}ü\n`
    expect(Buffer.byteLength(first.slice(0, -2))).toBe(65_535)
    const stray = Buffer.concat([Buffer.from(`${first}B,Größe `), Buffer.from([0xe9]), Buffer.from(' blau\n')])
    expect(await parseEveryWay(stray, 'csv')).toEqual([
      { line: 2, row: { id: 'A', title: `${'x'.repeat(65_535 - head.length)}ü` } },
      { line: 3, row: { id: 'B', title: 'Größe \ufffd blau' } },
    ])
  })

  it('reads TSV, and a CSV without a header as col1, col2…', async () => {
    const tsv = 'id\ttitle\tprice\nA-1\tSchal, rot\t19.99 EUR\nA-2\t15" Monitor\t149.00 EUR\n'
    expect(await parseEveryWay(tsv, 'tsv')).toEqual([
      { line: 2, row: { id: 'A-1', title: 'Schal, rot', price: '19.99 EUR' } },
      { line: 3, row: { id: 'A-2', title: '15" Monitor', price: '149.00 EUR' } },
    ])
    expect(await parseEveryWay('A-1,Schal\nA-2,Mütze\n', 'csv', { header: false })).toEqual([
      { line: 1, row: { col1: 'A-1', col2: 'Schal' } },
      { line: 2, row: { col1: 'A-2', col2: 'Mütze' } },
    ])
  })

  it('reports a ragged record alone, naming the counts, and goes on', async () => {
    const csv = 'id,title,price\n1,Hat,10\n2,Scarf\n3,Glove,5,extra\n4,Sock,2\n'
    expect(await parseEveryWay(csv, 'csv')).toEqual([
      { line: 2, row: { id: '1', title: 'Hat', price: '10' } },
      { line: 3, error: 'the record has 2 fields, the header has 3', excerpt: '2,Scarf' },
      { line: 4, error: 'the record has 4 fields, the header has 3', excerpt: '3,Glove,5,extra' },
      { line: 5, row: { id: '4', title: 'Sock', price: '2' } },
    ])
  })

  it('refuses an HTML page served in place of the file, saying what it is', async () => {
    for (const page of ['<!DOCTYPE html>\n<html><body>Sign in</body></html>\n', '\uFEFF  <html lang="de">\n<body>503</body></html>']) {
      expect((await failure(page, 'csv')).message).toBe('the file is an HTML page (a sign-in or error page?), not a CSV file')
      expect((await failure(page, 'tsv')).message).toBe('the file is an HTML page (a sign-in or error page?), not a TSV file')
    }
    // Markup in a value is no page, nor is a column named html.
    expect(await parse('html,id\n<html>,1\n', 'csv')).toEqual([{ line: 2, row: { html: '<html>', id: '1' } }])
  })

  it('refuses a header with a repeated or an empty name, naming the column', async () => {
    expect((await failure('id,title,price,Title , price\n1,a,2,b,3\n', 'csv')).message).toBe('column 5 of the header repeats the name "price" of column 3')
    expect((await failure('id,,price\n', 'csv')).message).toBe('column 2 of the header has no name')
    expect((await failure('id;title;"  "\n', 'csv', { delimiter: ';' })).message).toBe('column 3 of the header has no name')
  })

  it('refuses a quote that is never closed, at the line where its record starts', async () => {
    const csv = 'id,title\n1,ok\n2,"never closed\n3,lost\n4,lost too\n'
    expect((await failure(csv, 'csv')).message).toBe('the record starting at line 3 opens a quote that is never closed')
    const long = `id,title\n1,ok\n2,"never closed\n${'3,lost\n'.repeat(1000)}`
    const limits = { ...LIMITS, maxLineBytes: 1000 }
    expect((await failure(long, 'csv', {}, limits)).message).toBe('the record starting at line 3 grows past 4000 bytes: is a quote never closed?')
  })
})

describe('NDJSON and JSON', () => {
  it('reads NDJSON, values as a stream upload turns them into text, bad lines reported alone', async () => {
    const ndjson = [
      '\uFEFF{"id":"P-1","title":"Teller","price":12.50,"stock":0,"active":true,"discontinued":false,"note":null}',
      '',
      '{"id":"P-2","title":"Schale","sizes":[10,12.5],"dims":{"h":"5 cm"}}',
      '{"id":"P-3","title":broken}',
      '["P-4","Tasse"]',
      '   ',
      '{"id":"P-5","title":"Krug \\u00e4"}\r',
      '42',
      '{"id":"P-6"}',
    ].join('\n')
    const records = await parseEveryWay(ndjson, 'ndjson')
    expect(records).toEqual([
      { line: 1, row: { id: 'P-1', title: 'Teller', price: '12.50', stock: '0', active: '1', discontinued: '', note: '' } },
      { line: 3, row: { id: 'P-2', title: 'Schale', sizes: '[10,12.5]', dims: '{"h":"5 cm"}' } },
      { line: 4, error: expect.stringMatching(/^the line is not valid JSON: /) as string, excerpt: '{"id":"P-3","title":broken}' },
      { line: 5, error: 'the line is not a JSON object', excerpt: '["P-4","Tasse"]' },
      { line: 7, row: { id: 'P-5', title: 'Krug ä' } },
      { line: 8, error: 'the line is not a JSON object', excerpt: '42' },
      { line: 9, row: { id: 'P-6' } },
    ])
  })

  it('reads a JSON array, and one wrapped in an object whose other members are skipped', async () => {
    const products = [
      { id: 'J-1', title: 'Lampe "Nova"', price: 49.9, tags: ['licht', 'led'] },
      { id: 'J-2', title: 'Kabel [2 m], weiß', price: '9.90' },
    ]
    const expected = [
      { line: 2, row: { id: 'J-1', title: 'Lampe "Nova"', price: '49.9', tags: '["licht","led"]' } },
      { line: 3, row: { id: 'J-2', title: 'Kabel [2 m], weiß', price: '9.90' } },
    ]
    const array = `[\n${products.map((product) => JSON.stringify(product)).join(',\n')}\n]\n`
    expect(await parseEveryWay(array, 'json')).toEqual(expected)
    const wrapped = `{"meta": {"count": 2, "note": "[not this]"},"products": ${array}, "next": null}`
    expect(await parseEveryWay(wrapped, 'json')).toEqual(expected)
    expect(await parse(`{"items":[{"id":"x"},"text",{"id":"y","n":1e3}]}`, 'json')).toEqual([
      { line: 1, row: { id: 'x' } },
      { line: 1, error: 'the element is not a JSON object', excerpt: '"text"' },
      { line: 1, row: { id: 'y', n: '1e3' } },
    ])
    expect(await parse('[]', 'json')).toEqual([])
  })

  it('refuses JSON that is no array of products, or cut off', async () => {
    expect((await failure('"products"', 'json')).message).toBe('a JSON source is an array of products, or an object holding one')
    expect((await failure('{"count": 3}', 'json')).message).toBe('the JSON object holds no array of products')
    expect((await failure('[{"id":"a"},\n{"id":"b"', 'json')).message).toBe('the JSON ends at line 2 before its array is closed: is the file cut off?')
    expect((await failure('[{"id":"a"}]\n[{"id":"b"}]', 'json')).message).toBe('the JSON goes on after its end, at line 2')
  })
})

describe('gzip', () => {
  it('is recognised by its magic bytes, whatever the format', async () => {
    // parseEveryWay above compares each format's gzipped records with its plain ones; a plain file
    // starting with 0x1f alone is not gzip.
    expect(await parse('\u001fid\n1\n', 'csv', { header: false })).toEqual([
      { line: 1, row: { col1: '\u001fid' } },
      { line: 2, row: { col1: '1' } },
    ])
  })

  it('is undone twice: a .csv.gz served with Content-Encoding gzip arrives gzipped twice', async () => {
    const csv = 'id,title\nG1,Hut\n'
    expect(await parse(gzipSync(gzipSync(csv)), 'csv')).toEqual([{ line: 2, row: { id: 'G1', title: 'Hut' } }])
    expect(await parse(gzipSync(gzipSync(csv)), 'csv', {}, LIMITS, 1)).toEqual([{ line: 2, row: { id: 'G1', title: 'Hut' } }])
  })

  it('refuses a corrupted or truncated gzip file', async () => {
    const gzip = gzipSync('id,title\n' + 'X-1,Hut\n'.repeat(10_000))
    const corrupted = Buffer.from(gzip)
    corrupted.fill(0x55, 20, 40)
    expect((await failure(corrupted, 'csv')).message).toMatch(/^the file starts as gzip but cannot be decompressed: /)
    expect((await failure(gzip.subarray(0, gzip.length / 2), 'csv')).message).toMatch(/cannot be decompressed: unexpected end of file/)
    expect((await failure(Buffer.from([0x1f, 0x8b, 0x08]), 'json')).message).toMatch(/cannot be decompressed/)
  })
})

describe('limits', () => {
  const small: SourceLimits = { maxLineBytes: 100, maxColumns: 3, maxRows: 3 }

  it('refuses a record longer than maxLineBytes alone, in every format', async () => {
    const long = 'x'.repeat(150)
    // 100 bytes of 'ü' (2 bytes each) are 50 characters: bytes are what count.
    const wide = 'ü'.repeat(50)
    const csv = await parse(`id,title\n1,${long}\n2,ok\n3,${wide}\n`, 'csv', {}, small)
    expect(csv.map((r) => ('error' in r ? `${r.line} ${r.error}` : r.line))).toEqual([
      '2 the record is longer than 100 bytes',
      3,
      '4 the record is longer than 100 bytes',
    ])
    const ndjson = await parse(`{"id":"1","t":"${long}"}\n{"id":"2"}\n{"id":"3","t":"${wide}"}`, 'ndjson', {}, small)
    expect(ndjson.map((r) => ('error' in r ? `${r.line} ${r.error}` : r.line))).toEqual([
      '1 the record is longer than 100 bytes',
      2,
      '3 the record is longer than 100 bytes',
    ])
    const json = await parse(`[{"id":"1","t":"${long}"},\n{"id":"2"}]`, 'json', {}, small)
    expect(json).toEqual([
      { line: 1, error: 'the record is longer than 100 bytes', excerpt: `{"id":"1","t":"${long}"}` },
      { line: 2, row: { id: '2' } },
    ])
    const xml = await parse(`<rss><channel>\n<item><title>${long}</title></item>\n<item><title>ok</title></item></channel></rss>`, 'xml', {}, small)
    expect(xml).toEqual([
      { line: 2, error: 'the record is longer than 100 characters', excerpt: '{}' },
      { line: 3, row: { title: 'ok' } },
    ])
  })

  it('refuses the record that brings a name past maxColumns, keeping rows with known names', async () => {
    const ndjson = ['{"id":"1","a":"x"}', '{"id":"2","b":"y"}', '{"id":"3","c":"z"}', '{"id":"4","a":"w","b":"v"}'].join('\n')
    expect(await parse(ndjson, 'ndjson', {}, { ...small, maxRows: 10 })).toEqual([
      { line: 1, row: { id: '1', a: 'x' } },
      { line: 2, row: { id: '2', b: 'y' } },
      {
        line: 3,
        error: 'the record would bring the file past 3 distinct attribute names; rows with names already used are kept',
        excerpt: '{"id":"3","c":"z"}',
      },
      { line: 4, row: { id: '4', a: 'w', b: 'v' } },
    ])
    expect((await failure('id,a,b,c\n1,2,3,4\n', 'csv', {}, small)).message).toBe('the header has 4 columns, more than 3')
    const longName = { ...LIMITS, maxAttributeNameLength: 10 }
    expect(await parse('{"id":"1","a_very_long_name":"x"}', 'ndjson', {}, longName)).toEqual([
      { line: 1, error: 'the attribute name "a_very_long_name" is longer than 10 characters', excerpt: '{"id":"1","a_very_long_name":"x"}' },
    ])
  })

  it('fails the file past maxRows', async () => {
    const four = { csv: 'id\n1\n2\n3\n4\n', ndjson: '{"id":"1"}\n{"id":"2"}\n{"id":"3"}\n{"id":"4"}\n', json: '[{"id":"1"},{"id":"2"},{"id":"3"},4]' }
    for (const [format, data] of Object.entries(four)) {
      expect((await failure(data, format as SourceFormat, {}, small)).message).toBe('the file has more than 3 products')
    }
    const xml = `<rss><channel>${'<item><g:id>1</g:id></item>'.repeat(4)}</channel></rss>`
    expect((await failure(xml, 'xml', {}, small)).message).toBe('the file has more than 3 products')
    expect(await parse('id\n1\n2\n3\n', 'csv', {}, small)).toHaveLength(3)
  })
})

describe('the body stream', () => {
  it('is returned when the reader stops early, and its errors come through as they are', async () => {
    // Each format as a file that never ends: only the reader's stop ends the body.
    const endless: Record<SourceFormat, [string, (n: number) => string]> = {
      csv: ['id,title\n', (n) => `${n},Hut\n`],
      tsv: ['id\ttitle\n', (n) => `${n}\tHut\n`],
      xml: ['<rss><channel>', (n) => `<item><g:id>${n}</g:id></item>\n`],
      ndjson: ['', (n) => `{"id":"${n}"}\n`],
      json: ['[', (n) => `{"id":"${n}"},\n`],
    }
    for (const [format, [head, record]] of Object.entries(endless) as [SourceFormat, [string, (n: number) => string]][]) {
      for (const gzipped of [false, true]) {
        let closed = false
        async function* body(): AsyncGenerator<Buffer> {
          try {
            // A gzip file may be several members one after the other: each chunk here is one.
            yield gzipped ? gzipSync(head) : Buffer.from(head)
            for (let n = 1; ; n++) yield gzipped ? gzipSync(record(n)) : Buffer.from(record(n))
          } finally {
            closed = true
          }
        }
        for await (const first of parseSource(body(), format, {}, LIMITS)) {
          expect(first).toMatchObject({ row: { id: '1' } })
          break
        }
        await vi.waitFor(() => expect(closed, `${format}${gzipped ? ' gzipped' : ''}`).toBe(true))
      }
      const lost = new Error('socket hang up')
      async function* failing(): AsyncGenerator<Buffer> {
        yield Buffer.from(head + record(1) + record(2))
        throw lost
      }
      await expect(drain(parseSource(failing(), format, {}, LIMITS))).rejects.toBe(lost)
    }
  })

  it('refuses an XML item past maxLineBytes alone, and fails the file on a text running on past four times that', async () => {
    const limits = { ...LIMITS, maxLineBytes: 100 }
    const feed = (title: string) => `<rss><channel>\n<item><title>${title}</title></item>\n<item><g:id>2</g:id></item></channel></rss>`
    expect(await parseEveryWay(feed('x'.repeat(300)), 'xml', {}, limits)).toEqual([
      { line: 2, error: 'the record is longer than 100 characters', excerpt: '{}' },
      { line: 3, row: { id: '2' } },
    ])
    // Whether the text ends within one write to the parser or not, the outcome is the same.
    for (const size of [7, 65_536]) {
      const error = await failure(feed('x'.repeat(1000)), 'xml', {}, limits, size)
      expect(error.message).toMatch(/^the XML has more than 400 characters without markup before line 2/)
    }
  })
})

describe('memory', () => {
  it('stays flat over 50 MB of CSV streamed from a generator', async () => {
    const gc = exposedGc()
    const rowsPerChunk = 500
    const chunks = 1000
    let produced = 0
    async function* generated(): AsyncGenerator<Buffer> {
      yield Buffer.from('id,title,description,price,link,image_link,availability\n')
      for (let chunk = 0; chunk < chunks; chunk++) {
        let text = ''
        for (let n = 0; n < rowsPerChunk; n++) {
          const id = chunk * rowsPerChunk + n
          text += `SKU-${id},"Wanderschuh ""Alpin"" Gr. ${id % 50}","Wasserdicht, atmungsaktiv",${(id % 1000) / 10} EUR,`
          text += `https://shop.example.com/p/${id},https://cdn.example.com/${id}/main.jpg,in_stock\n`
        }
        const bytes = Buffer.from(text)
        produced += bytes.length
        yield bytes
      }
    }
    gc()
    const before = process.memoryUsage().heapUsed
    let rows = 0
    let peak = 0
    for await (const record of parseSource(generated(), 'csv', {}, { ...LIMITS, maxRows: 10_000_000 })) {
      if (!('row' in record)) throw new Error(`record ${record.line}: ${record.error}`)
      rows++
      if (rows % 100_000 === 0) {
        // Measured mid-stream, with the parser's state alive: what it keeps per row would show here.
        gc()
        peak = Math.max(peak, process.memoryUsage().heapUsed - before)
      }
    }
    expect(rows).toBe(rowsPerChunk * chunks)
    expect(produced).toBeGreaterThan(50_000_000)
    // About 1 MB measured: a parser that kept 32 bytes of each of the 500,000 rows would pass the bound.
    expect(peak).toBeLessThan(16 * 1024 * 1024)
  })
})

/** Text as Windows-1252 bytes (Node encodes Latin-1 only): the characters where the two differ, mapped by hand. */
function encodeWindows1252(text: string): Buffer {
  const special: Record<string, number> = { '€': 0x80, '–': 0x96, '“': 0x93, '”': 0x94 }
  return Buffer.from([...text].map((char) => special[char] ?? char.charCodeAt(0)))
}

async function drain(records: AsyncGenerator<SourceRecord>): Promise<void> {
  for await (const _ of records);
}

/** The garbage collector, exposed for this process however vitest started it. */
function exposedGc(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc
  if (exposed) return exposed
  v8.setFlagsFromString('--expose-gc')
  return vm.runInNewContext('gc') as () => void
}
