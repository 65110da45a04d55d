import { beforeAll, describe, expect, it } from 'vitest'
import { createChannel, history } from '../helpers/clients.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { files, goodProduct, googleChannel, idsOf, summary } from '../templates/template-fixture.js'
import { addRule, feedOf, importedSite, listRules, plainChannel, preview, readStage, rulesPath, type Row } from './rule-fixture.js'

// What a preview shows is what the next export writes (issue 32): for sampled products, the feed
// line byte for byte and the template's checks, for the whole stage the readiness and counts; and
// a preview writes nothing. Site rules make the intermediate stage every channel reads; an exclude
// of the site leaves every channel, a channel's only its own.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

/** Forty products written the ways shops write them: availability and prices in other spellings, some unusable. */
function catalog(): Row[] {
  const spellings = ['In Stock', 'in stock', 'OUT OF STOCK', 'available', 'preorder', 'In stock ']
  return Array.from({ length: 40 }, (_, i) =>
    goodProduct(`P${String(i).padStart(2, '0')}`, {
      title: i % 7 === 0 ? `<b>Shirt</b> &amp; tie ${i}` : `Shirt ${i}`,
      availability: spellings[i % spellings.length] ?? 'in stock',
      price: i % 9 === 0 ? 'call us' : `${(10 + i * 1.237).toFixed(3)}`,
      color: i % 4 === 0 ? '' : (['Red', 'navy blue', 'GREEN'][i % 3] ?? 'Red'),
      brand: i % 5 === 0 ? 'acme' : 'Globex',
    }),
  )
}

const SITE_RULES = [
  {
    attribute: 'title',
    then: [{ action: 'strip_html' }, { action: 'concat', parts: [{ attribute: 'brand' }, { attribute: 'title' }, { attribute: 'color' }] }],
  },
  { attribute: 'price', then: [{ action: 'round', decimals: 2 }] },
]
const CHANNEL_RULES = [
  {
    attribute: 'availability',
    then: [{ action: 'map', entries: { 'in stock': 'in_stock', available: 'in_stock', 'out of stock': 'out_of_stock' }, default: 'in_stock' }],
  },
  { if: { all: [{ attribute: 'availability', operator: 'equals', value: 'out_of_stock' }] }, then: [{ action: 'exclude' }] },
  {
    attribute: 'color',
    then: [
      { action: 'default_if_empty', value: 'multicolor' },
      { action: 'case', to: 'lower' },
    ],
  },
]

/** A product read (below /product/v2) with the account's credential. */
function productRead(f: ImportFixture, url: string) {
  return t.request({ method: 'GET', url, headers: f.account.platform })
}

describe('a channel preview', () => {
  let f: ImportFixture
  beforeAll(async () => {
    f = await importFixture(t)
    await importedSite(f, catalog())
    for (const rule of SITE_RULES) await addRule(f, rule)
  })

  it.each(['tsv', 'xml'])('in %s shows, for sampled products, the line the next export writes and its checks, and writes nothing', async (format) => {
    const channel = await googleChannel(f, { name: `Google ${format}`, format, filenames: [{ type: null, filename: `feed-{channel_id}.${format}` }] })
    const first = await f.run('channel', { id: channel.id })
    expect(first.status, first.message).toBe('success')
    const before = { feed: await files(t, f, channel.id), history: await history(f, channel.id), rules: await listRules(f, channel.id) }
    const ids = ['P00', 'P02', 'P03', 'P07', 'P09', 'P13', 'P20']
    const shown = await preview(f, { rules: CHANNEL_RULES, ids }, channel.id)
    // Nothing written: the files, the history and the rules are what they were.
    expect({ feed: await files(t, f, channel.id), history: await history(f, channel.id), rules: await listRules(f, channel.id) }).toEqual(before)
    expect(shown.products.map((p) => p.id)).toEqual(ids)

    for (const rule of CHANNEL_RULES) await addRule(f, rule, channel.id)
    const run = await f.run('channel', { id: channel.id })
    expect(run.status, run.message).toBe('success')
    const feed = (await files(t, f, channel.id)).full ?? ''
    for (const product of shown.products) {
      const line = product.line ?? null
      if (line === null) {
        expect(product.excluded || product.checks?.after?.in_feed === false, `${product.id}: no line, so left out`).toBe(true)
        expect(feed, `${product.id} is not in the feed`).not.toContain(`>${product.id}<`)
        continue
      }
      if (format === 'tsv') expect(feed.split('\n'), `${product.id}: the preview's line is a line of the file`).toContain(line)
      else expect(feed, `${product.id}: the preview's item is an item of the file`).toContain(line)
    }
    // Out of stock (P02: OUT OF STOCK) is excluded by the rule; a price that is no number (P09) fails Google's check.
    expect(shown.products.find((p) => p.id === 'P02')).toMatchObject({ excluded: true, after: null, line: null })
    expect(shown.products.find((p) => p.id === 'P09')?.checks?.after?.issues.map((i) => i.code)).toContain('price_invalid_price')
    // The whole-stage summary is what the export then counts.
    const counted = await summary(f, channel.id)
    expect(shown.summary).toMatchObject({ exported: counted.products_exported, left_out: counted.products_left_out, readiness: counted.readiness_score })
    expect(format === 'tsv' ? idsOf(feed).length : (feed.match(/<item>/g) ?? []).length).toBe(counted.products_exported)
  })

  it('of a mapped channel writes over a mapped constant and creates a column, as the export then does', async () => {
    const mapping = [
      ...['id', 'title', 'description', 'link', 'image_link', 'availability', 'price', 'brand', 'gtin'].map((column) => ({ column, source: column })),
      { column: 'condition', value: 'new' },
      { column: 'google_product_category', value: '1604' },
    ]
    const channel = await googleChannel(f, { name: 'Google mapped', mapping })
    const rules = [
      ...CHANNEL_RULES.slice(0, 2),
      { attribute: 'condition', if: { all: [{ attribute: 'title', operator: 'contains', value: 'tie' }] }, then: [{ action: 'set', value: 'refurbished' }] },
      // A name the mapping does not have reads the intermediate stage's attribute; the rule adds it as a column.
      { attribute: 'color', then: [{ action: 'case', to: 'upper' }] },
    ]
    const ids = ['P00', 'P01', 'P07', 'P21']
    const shown = await preview(f, { rules, ids }, channel.id)
    expect(shown.columns).toEqual([...mapping.map((m) => m.column), 'color'])
    expect(shown.products.map((p) => [p.id, p.after?.condition, p.after?.color])).toEqual([
      ['P00', 'refurbished', ''],
      ['P01', 'new', 'NAVY BLUE'],
      ['P07', 'refurbished', 'NAVY BLUE'],
      ['P21', 'refurbished', 'RED'],
    ])
    for (const rule of rules) await addRule(f, rule, channel.id)
    const run = await f.run('channel', { id: channel.id })
    expect(run.status, run.message).toBe('success')
    const feed = (await files(t, f, channel.id)).full ?? ''
    expect(feed.split('\n')[0]).toBe(shown.columns.join('\t'))
    for (const product of shown.products) {
      // P00's price is no price: Google's check leaves it out, and the preview says so.
      if (product.line === null) expect([product.id, product.checks?.after?.in_feed]).toEqual(['P00', false])
      else expect(feed.split('\n'), product.id).toContain(product.line)
    }
  })

  it("shows the saved rules' readiness beside the drafts'", async () => {
    const channel = await googleChannel(f, { name: 'Google saved' })
    await addRule(f, CHANNEL_RULES[0] ?? {}, channel.id)
    const shown = await preview(f, { rules: [], limit: 3 }, channel.id)
    expect(shown.summary?.saved).not.toBeNull()
    expect(shown.summary?.readiness).toBeLessThan(shown.summary?.saved?.readiness ?? 0)
    expect(shown.summary?.rules).toEqual([])
  })
})

describe('site rules and the intermediate stage', () => {
  let f: ImportFixture
  beforeAll(async () => {
    f = await importFixture(t)
    await importedSite(f, catalog())
    for (const rule of SITE_RULES) await addRule(f, rule)
    await addRule(f, { attribute: '___source', then: [{ action: 'set', value: 'shop {brand}' }] })
    await addRule(f, {
      attribute: 'label',
      if: { any: [{ attribute: 'price', operator: 'less_than', value: '20' }] },
      then: [{ action: 'set', value: 'budget' }],
    })
  })

  it('is read like the other stages, with the columns the rules create, and what a site preview shows', async () => {
    const read = await readStage(t, f, 'intermediate')
    expect(read.columns).toEqual([
      'id',
      'title',
      'description',
      'link',
      'image_link',
      'availability',
      'price',
      'condition',
      'brand',
      'gtin',
      'google_product_category',
      'color',
      'label',
    ])
    const p07 = read.rows.find((row) => row.id === 'P07')
    expect(p07).toMatchObject({ title: 'Globex Shirt & tie 7 navy blue', price: '18.66', label: 'budget' })
    // The import stage is as uploaded.
    const raw = await readStage(t, f, 'import')
    expect(raw.rows.find((row) => row.id === 'P07')).toMatchObject({ title: '<b>Shirt</b> &amp; tie 7', price: '18.659' })
    // A site preview's `after` is the intermediate stage's row.
    const shown = await preview(f, { ids: ['P07', 'P09', 'P00'] })
    for (const product of shown.products) {
      const row = read.rows.find((r) => r.id === product.id) ?? {}
      for (const column of read.columns) expect(product.after?.[column] ?? '', `${product.id}.${column}`).toBe(row[column])
    }
    // Hidden columns on asking, a filter and fields over the written values, paging.
    const base = `/product/v2/site/${f.site.id}/stage/intermediate`
    const hidden = await productRead(f, `${base}/0?hidden=1&fields=id,___source&limit=2`)
    expect(hidden.json<{ products: Row[] }>().products).toEqual([
      { id: 'P00', ___source: 'shop acme' },
      { id: 'P01', ___source: 'shop Globex' },
    ])
    const filtered = await productRead(f, `${base}/0?fields=id,label&filter=${encodeURIComponent("label = 'budget'")}&limit=100`)
    const budget = read.rows.filter((row) => row.label === 'budget').map((row) => ({ id: row.id, label: 'budget' }))
    expect(budget.length).toBeGreaterThan(3)
    expect(filtered.json<{ products: Row[] }>().products).toEqual(budget)
    const page = await productRead(f, `${base}/0?fields=id,title&limit=5&offset=10`)
    expect(page.json<{ products: Row[] }>().products).toEqual(read.rows.slice(10, 15).map((row) => ({ id: row.id, title: row.title })))
  })

  it('leaves an excluded product out of the intermediate stage and every channel; a channel exclude only out of its channel', async () => {
    const g = await importFixture(t)
    await importedSite(g, catalog())
    const a = await plainChannel(g, 'ndjson')
    const b = await plainChannel(g, 'csv', { name: 'second', export_name: 'second' })
    await addRule(g, { if: { all: [{ attribute: 'brand', operator: 'equals', value: 'ACME' }] }, then: [{ action: 'exclude' }] })
    await addRule(g, { if: { all: [{ attribute: 'price', operator: 'greater_than', value: '50' }] }, then: [{ action: 'exclude' }] }, a)
    const run = await g.run('export-all')
    expect(run.status, run.message).toBe('success')
    const all = catalog()
    const acme = all.filter((row) => row.brand === 'acme').map((row) => row.id)
    const dear = all.filter((row) => Number(row.price) > 50 && row.brand !== 'acme').map((row) => row.id)
    expect(acme.length).toBeGreaterThan(0)
    expect(dear.length).toBeGreaterThan(0)
    const properties = await productRead(g, `/product/v2/site/${g.site.id}/stage/intermediate/properties`)
    expect(properties.json<{ products: number }>().products).toBe(all.length - acme.length)
    const ids = (rows: Row[]) => rows.map((row) => row.id).sort()
    const kept = all.filter((row) => !acme.includes(row.id ?? ''))
    expect(ids((await readStage(t, g, 'intermediate')).rows)).toEqual(ids(kept))
    expect(ids((await feedOf(t, g, a)).rows)).toEqual(ids(kept.filter((row) => !dear.includes(row.id ?? ''))))
    expect(ids((await feedOf(t, g, b)).rows)).toEqual(ids(kept))
    expect((await readStage(t, g, 'import')).rows).toHaveLength(all.length)
  })

  it("let a channel's filter name a column they create", async () => {
    const channel = await createChannel(f, { name: 'budget only', export_name: 'budget', format: 'ndjson', filter: "label = 'budget'" })
    const run = await f.run('channel', { id: channel.id })
    expect(run.status, run.message).toBe('success')
    const budget = (await readStage(t, f, 'intermediate')).rows.filter((row) => row.label === 'budget').map((row) => row.id)
    expect((await feedOf(t, f, channel.id)).rows.map((row) => row.id)).toEqual(budget)
    const unknown = await f.c.post(`/sites/${f.site.id}/channels`, { name: 'x', export_name: 'x', filter: "nosuch = 'x'" })
    expect(unknown.statusCode).toBe(400)
  })

  it('run no branch on a product an earlier rule excluded', async () => {
    const rules = [
      { if: { all: [{ attribute: 'brand', operator: 'equals', value: 'acme' }] }, then: [{ action: 'exclude' }] },
      {
        attribute: 'color',
        if: { all: [{ attribute: 'color', operator: 'equals', value: 'red' }] },
        then: [{ action: 'set', value: 'then' }],
        else: [{ action: 'set', value: 'else' }],
      },
    ]
    const shown = await preview(f, { rules, ids: ['P00', 'P01'] })
    expect(shown.products.map((p) => [p.id, p.excluded, p.steps.map((s) => [s.matched, s.excluded, s.after])])).toEqual([
      [
        'P00',
        true,
        [
          [true, true, null],
          [false, false, ''],
        ],
      ],
      [
        'P01',
        false,
        [
          [false, false, null],
          [false, false, 'else'],
        ],
      ],
    ])
  })

  it('may not create a column an XML channel without a mapping cannot write', async () => {
    const g = await importFixture(t)
    await importedSite(g, catalog().slice(0, 3))
    const before = await listRules(g)
    await addRule(g, { attribute: 'bad name', then: [{ action: 'set', value: 'x' }] })
    const xml = await plainChannel(g, 'xml', { name: 'xml', export_name: 'xml' })
    const refused = await g.c.post(rulesPath(g), { attribute: 'other bad', then: [{ action: 'set', value: 'x' }] })
    expect(refused.statusCode).toBe(400)
    expect(refused.json<{ message: string }>().message).toMatch(
      new RegExp(`^attribute: "other bad" cannot be an element of the XML feed of channel ${xml} \\(xml\\)`),
    )
    expect((await listRules(g)).length).toBe(before.length + 1)
    // The rule saved before the channel existed: the export names the column and where it came from.
    const run = await g.run('channel', { id: xml })
    expect(run.status).toBe('failed')
    const errors = await g.errors(run.pid)
    expect(errors.map((e) => e.message).join('\n')).toMatch(
      /"bad name".*its columns are the intermediate stage's \(the import stage's and those its site rules create\)/s,
    )
  })

  it('are copied with the site, and a channel’s with its channel', async () => {
    const channel = await createChannel(f, { name: 'copied', export_name: 'copied', format: 'csv' })
    await addRule(f, CHANNEL_RULES[2] ?? {}, channel.id)
    const response = await f.c.post(`/sites/${f.site.id}/copy`, { site_name: 'Copy', copy_shared_setting: true, copy_export: true })
    expect(response.statusCode, response.body).toBe(201)
    const copyId = response.json<{ Sites: { id: string }[] }>().Sites[0]?.id ?? ''
    const copy = { ...f, site: { ...f.site, id: copyId } }
    const strip = (rules: { summary: string; position: number; enabled: boolean }[]) =>
      rules.map(({ summary, position, enabled }) => ({ summary, position, enabled }))
    expect(strip(await listRules(copy))).toEqual(strip(await listRules(f)))
    const channels = await f.c.get(`/sites/${copyId}/channels`)
    const copiedChannel = channels.json<{ Channels: { id: string; name: string }[] }>().Channels.find((c) => c.name === 'copied')
    expect(strip(await listRules(copy, copiedChannel?.id))).toEqual(strip(await listRules(f, channel.id)))
    expect((await f.c.get(rulesPath(copy, copiedChannel?.id))).statusCode).toBe(200)
  })
})
