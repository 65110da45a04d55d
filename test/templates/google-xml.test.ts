import { parse as parseCsv } from 'csv-parse/sync'
import { XMLParser } from 'fast-xml-parser'
import { beforeAll, describe, expect, it } from 'vitest'
import { createChannel, download, readChannel } from '../helpers/clients.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { feedPaths } from '../helpers/responses.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { diagnostics } from './template-fixture.js'

// Google's XML feed as Google reads it (issue 31): an RSS 2.0 document whose <channel> has its title,
// link and description; no empty elements; the group attributes (shipping, tax, installment,
// subscription_cost, product_detail, …) as sub-elements per Google's XML specification; repeated
// attributes one element per value. A text feed of the same products keeps the colon form as sent.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

const base = (id: string) => ({
  id,
  title: `Portable media player ${id}`,
  description: 'A pocket-sized player with a 2.5" display & 32 GB of storage.',
  link: `https://shop.example.com/p/${id}?utm_source=google`,
  image_link: `https://cdn.example.com/${id}.jpg`,
  availability: 'in_stock',
  price: '199.00 USD',
  brand: 'Acme',
  gtin: '4006381333931',
  condition: 'new',
  google_product_category: '233',
})

/** Every group attribute in its colon form, and the repeated ones with two values each. */
const FULL = {
  ...base('full'),
  shipping: 'US:CA:Overnight:16.00 USD, US::Standard:4.95 USD',
  tax: 'US:CA:7.25:yes',
  installment: '6:50 BRL',
  subscription_cost: 'month:12:35.00 USD',
  loyalty_points: 'Program A:100:1.5',
  product_detail: 'General:Product Type:Digital player,Display:Diagonal Size:"2.5""",Display:Resolution:"320 x 240, 60 Hz"',
  // Text pasted from a word processor: a soft line break is U+000B, which XML cannot carry.
  product_highlight: 'Pocket-sized:\u000bfits any bag',
  certification: 'EC:EPREL:123456',
  free_shipping_threshold: 'US:50.00 USD',
  size_type: 'petite, maternity',
  additional_image_link: 'https://cdn.example.com/full-b.jpg,https://cdn.example.com/full-c.jpg',
  // Empty and blank values: no element at all.
  sale_price: '',
  mpn: '',
  color: '   ',
  size: '\t',
  material: ' \n ',
}
/** Blank group and repeated attributes write no element either. */
const BLANK = { ...base('blank'), shipping: ' \t ', tax: '', product_detail: ' ', size_type: '  ', additional_image_link: '', certification: '\n' }
const PRODUCTS = [FULL, BLANK]
const COLUMNS = [...new Set(PRODUCTS.flatMap((p) => Object.keys(p)))]

interface Feeds {
  f: ImportFixture
  xml: string
  tsv: string
  xmlChannel: string
}

async function fullFile(f: ImportFixture, id: string): Promise<string> {
  const [path] = feedPaths(await readChannel(f, id))
  const response = await download(t, path ?? '')
  expect(response.statusCode, response.body).toBe(200)
  return response.body
}

// One element of an item is an array whatever its count; a group element is an object of sub-elements.
const parser = new XMLParser({
  parseTagValue: false,
  trimValues: false,
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  isArray: (name, jpath) => name === 'item' || String(jpath).split('.').length === 4,
})
type Item = Record<string, (string | Record<string, string>)[]>
interface Rss {
  rss: { '@version': string; '@xmlns:g': string; channel: { title: string; link: string; description: string; item: Item[] } }
}

describe('a Google Shopping channel in format xml', () => {
  let feeds: Feeds | undefined
  const get = () => feeds ?? expect.fail('the channels did not run')
  beforeAll(async () => {
    const f = await importFixture(t, { title: 'Media shop' })
    const stream = await f.createStream()
    await f.attach(stream)
    const uploaded = await f.upload(stream, PRODUCTS)
    expect(uploaded.statusCode, uploaded.body).toBe(202)
    const mapping = COLUMNS.map((column) => ({ column, source: column }))
    const channel = (format: string) =>
      createChannel(f, {
        name: `Google ${format}`,
        export_name: 'google_shopping',
        format,
        currency: 'EUR',
        mapping,
        filenames: [{ type: null, filename: `g-{channel_id}.${format}` }],
      })
    const [xmlChannel, tsvChannel] = [await channel('xml'), await channel('tsv')]
    const run = await f.run('all')
    expect(run.status, run.message).toBe('success')
    feeds = { f, xml: await fullFile(f, xmlChannel.id), tsv: await fullFile(f, tsvChannel.id), xmlChannel: xmlChannel.id }
  }, 120_000)

  const parsed = () => parser.parse(get().xml) as Rss
  const item = (id: string): Item => parsed().rss.channel.item.find((i) => i['g:id']?.[0] === id) ?? expect.fail(`no item ${id}`)

  it('is RSS 2.0 in Google namespace whose channel has a title, the link of the products’ website and a description', () => {
    const { rss } = parsed()
    expect(rss['@version']).toBe('2.0')
    expect(rss['@xmlns:g']).toBe('http://base.google.com/ns/1.0')
    expect(rss.channel.title).toMatch(/\S/)
    expect(rss.channel.link).toBe('https://shop.example.com')
    expect(rss.channel.description).toMatch(/\S/)
    expect(rss.channel.item.map((i) => i['g:id']?.[0]).sort()).toEqual(['blank', 'full'])
  })

  it('checks the products without a diagnostic', async () => {
    expect((await diagnostics(get().f, get().xmlChannel)).entries).toEqual([])
  })

  it('writes no empty element, and none for an empty or blank value', () => {
    expect(get().xml).not.toMatch(/<[\w:]+\s*\/>/)
    expect(get().xml).not.toMatch(/<([\w:]+)>\s*<\/\1>/)
    for (const name of ['sale_price', 'mpn', 'color', 'size', 'material']) expect(item('full'), name).not.toHaveProperty(`g:${name}`)
    for (const name of ['shipping', 'tax', 'product_detail', 'size_type', 'additional_image_link', 'certification']) {
      expect(item('blank'), name).not.toHaveProperty(`g:${name}`)
    }
  })

  it('writes each shipping group as <g:shipping> with a sub-element per non-empty part', () => {
    expect(item('full')['g:shipping']).toEqual([
      { 'g:country': 'US', 'g:region': 'CA', 'g:service': 'Overnight', 'g:price': '16.00 USD' },
      { 'g:country': 'US', 'g:service': 'Standard', 'g:price': '4.95 USD' },
    ])
  })

  it('writes tax, installment, subscription_cost, loyalty_points, certification and free_shipping_threshold as sub-elements', () => {
    expect(item('full')).toMatchObject({
      'g:tax': [{ 'g:country': 'US', 'g:region': 'CA', 'g:rate': '7.25', 'g:tax_ship': 'yes' }],
      'g:installment': [{ 'g:months': '6', 'g:amount': '50 BRL' }],
      'g:subscription_cost': [{ 'g:period': 'month', 'g:period_length': '12', 'g:amount': '35.00 USD' }],
      'g:loyalty_points': [{ 'g:name': 'Program A', 'g:points_value': '100', 'g:ratio': '1.5' }],
      'g:certification': [{ 'g:certification_authority': 'EC', 'g:certification_name': 'EPREL', 'g:certification_code': '123456' }],
      'g:free_shipping_threshold': [{ 'g:country': 'US', 'g:price_threshold': '50.00 USD' }],
    })
  })

  it('writes product_detail per detail, a quoted part without its quotes (a comma in it kept) and a doubled quote as one', () => {
    expect(item('full')['g:product_detail']).toEqual([
      { 'g:section_name': 'General', 'g:attribute_name': 'Product Type', 'g:attribute_value': 'Digital player' },
      { 'g:section_name': 'Display', 'g:attribute_name': 'Diagonal Size', 'g:attribute_value': '2.5"' },
      { 'g:section_name': 'Display', 'g:attribute_name': 'Resolution', 'g:attribute_value': '320 x 240, 60 Hz' },
    ])
  })

  it('writes repeated attributes one element per value', () => {
    expect(item('full')['g:size_type']).toEqual(['petite', 'maternity'])
    expect(item('full')['g:additional_image_link']).toEqual(['https://cdn.example.com/full-b.jpg', 'https://cdn.example.com/full-c.jpg'])
  })

  it('writes every element of an item in Google’s namespace, the text values as sent', () => {
    const full = item('full')
    expect(Object.keys(full).filter((name) => !name.startsWith('g:'))).toEqual([])
    expect(full['g:description']).toEqual([FULL.description])
    expect(full['g:link']).toEqual([FULL.link])
    expect(full['g:price']).toEqual(['199.00 USD'])
    expect(full['g:product_highlight'], 'a character XML cannot carry is left out').toEqual(['Pocket-sized:fits any bag'])
  })

  it('keeps the colon form as sent in a text feed of the same products', () => {
    const records = parseCsv(get().tsv, { columns: true, delimiter: '\t' }) as Record<string, string>[]
    const full = records.find((r) => r.id === 'full')
    const groups = ['shipping', 'tax', 'installment', 'subscription_cost', 'loyalty_points', 'product_detail', 'certification', 'free_shipping_threshold']
    expect(full).toMatchObject(Object.fromEntries([...groups, 'size_type', 'additional_image_link'].map((name) => [name, FULL[name as keyof typeof FULL]])))
    expect(records.find((r) => r.id === 'blank')).toMatchObject({ shipping: BLANK.shipping, certification: BLANK.certification })
  })
})
