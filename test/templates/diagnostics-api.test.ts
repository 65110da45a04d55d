import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { createChannel } from '../helpers/clients.js'
import { diagnostics, goodProduct, googleChannel, summary } from './template-fixture.js'

// The diagnostics of a channel through the platform interface (issue 24): templates listed and
// read, entries paged and filtered, bad filters refused with a message, values cut, another
// account's channel a 404, one site error per failing code, and settings checked when saved.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

async function exportedChannel(f: ImportFixture, rows: Record<string, string>[]): Promise<string> {
  const stream = await f.createStream()
  await f.attach(stream)
  expect((await f.upload(stream, rows)).statusCode).toBe(202)
  const channel = await googleChannel(f)
  expect((await f.run('all')).status).toBe('success')
  return channel.id
}

describe('GET /platform/v2/export_templates', () => {
  it('lists the built-in templates and reads one with its attributes, checks and specification', async () => {
    const f = await importFixture(t)
    const list = await f.c.get('/export_templates')
    expect(list.statusCode, list.body).toBe(200)
    const names = list.json<{ ExportTemplates: { name: string }[] }>().ExportTemplates.map((x) => x.name)
    expect(names).toEqual(['generic', 'google_shopping', 'meta_catalog', 'idealo'])
    const google = (await f.c.get('/export_templates/google_shopping')).json<{ ExportTemplates: Record<string, unknown>[] }>().ExportTemplates[0]
    expect(google).toMatchObject({ name: 'google_shopping', default_format: 'xml', formats: ['xml', 'tsv'] })
    expect((google?.specification as { version: string }).version).not.toBe('')
    const attributes = google?.attributes as { name: string; requirement: string; rules: { kind: string; max?: number }[] }[]
    expect(attributes.find((a) => a.name === 'title')).toMatchObject({ requirement: 'required', rules: [{ kind: 'max_length', max: 150 }] })
    expect((google?.checks as { code: string }[]).map((c) => c.code)).toContain('identifier_missing')
    const missing = await f.c.get('/export_templates/google-shoping')
    expect(missing.statusCode).toBe(404)
    expect(missing.json<{ message: string }>().message).toMatch(/No export template "google-shoping"/)
  })
})

describe('GET …/channels/{id}/diagnostics', () => {
  it('pages and filters the failed checks, with exact totals and values cut to 200 characters', async () => {
    const f = await importFixture(t)
    const long = 'y'.repeat(300)
    const channelId = await exportedChannel(f, [
      goodProduct('a'),
      goodProduct('b', { price: 'ten' }),
      goodProduct('c', { title: long }),
      goodProduct('d', { price: 'cheap', gtin: '123' }),
    ])
    const all = await diagnostics(f, channelId)
    // Three bare prices get the currency (info), b and d fail price, c the title, d the gtin.
    expect(all.total).toBe(all.entries.length)
    expect(all.entries.filter((e) => e.severity === 'error').map((e) => `${e.id}:${e.code}`)).toEqual([
      'b:price_invalid_price',
      'c:title_too_long',
      'd:price_invalid_price',
      'd:gtin_invalid_gtin',
    ])
    const title = all.entries.find((e) => e.code === 'title_too_long')
    expect(title).toMatchObject({ attribute: 'title', value: 'y'.repeat(200), message: 'title has more than 150 characters' })
    expect(title?.hint).toMatch(/150/)
    const byCode = await diagnostics(f, channelId, '&code=price_invalid_price')
    expect(byCode).toMatchObject({
      total: 2,
      entries: [
        { id: 'b', value: 'ten' },
        { id: 'd', value: 'cheap' },
      ],
    })
    expect((await diagnostics(f, channelId, '&severity=error&id=d')).entries.map((e) => e.code)).toEqual(['price_invalid_price', 'gtin_invalid_gtin'])
    expect((await diagnostics(f, channelId, '&attribute=gtin')).total).toBe(1)
    const page = await f.c.get(`/sites/${f.site.id}/channels/${channelId}/diagnostics?severity=error&limit=2&offset=2`)
    expect(page.json<{ Diagnostics: { id: string }[]; meta: unknown }>()).toMatchObject({
      Diagnostics: [{ id: 'd' }, { id: 'd' }],
      meta: { total: 4, limit: 2, offset: 2 },
    })
  })

  it('refuses filters the template cannot have with a 400 naming them, and answers 404 for another account', async () => {
    const f = await importFixture(t)
    const channelId = await exportedChannel(f, [goodProduct('a')])
    const path = `/sites/${f.site.id}/channels/${channelId}/diagnostics`
    for (const [query, message] of [
      ['severity=fatal', /severity: must be one of error, warning, info/],
      ['code=nope', /code: the google_shopping template has no code "nope"/],
      ['attribute=colour_of_sky', /attribute: the google_shopping template checks no attribute/],
      ['limit=0', /limit/],
      ['offset=-1', /offset/],
      ['id=a%00b', /id: .*NUL/],
    ] as const) {
      const response = await f.c.get(`${path}?${query}`)
      expect(response.statusCode, query).toBe(400)
      expect(response.json<{ success: boolean; message: string }>()).toMatchObject({ success: false, message: expect.stringMatching(message) as unknown })
    }
    const other = await importFixture(t)
    for (const suffix of ['', '/summary']) {
      const response = await other.c.get(`/sites/${f.site.id}/channels/${channelId}/diagnostics${suffix}`)
      expect(response.statusCode, suffix).toBe(404)
    }
    const ownSiteOtherChannel = await other.c.get(`/sites/${other.site.id}/channels/${channelId}/diagnostics`)
    expect(ownSiteOtherChannel.statusCode).toBe(404)
  })

  it("reads the last export's checks by the template it checked with, until the next export checks with another", async () => {
    const f = await importFixture(t)
    const channelId = await exportedChannel(f, [goodProduct('a', { title: 'x'.repeat(160) })])
    const changed = await f.c.put(`/sites/${f.site.id}/channels/${channelId}`, { export_name: 'meta_catalog', format: 'csv' })
    expect(changed.statusCode, changed.body).toBe(200)
    expect(await summary(f, channelId)).toMatchObject({
      template: 'google_shopping',
      by_code: expect.arrayContaining([expect.objectContaining({ code: 'title_too_long' })]) as unknown,
    })
    expect((await diagnostics(f, channelId, '&severity=error')).entries.map((e) => e.code)).toEqual(['title_too_long'])
    expect((await f.run('channel', { id: Number(channelId) })).status).toBe('success')
    // Meta takes titles up to 200 characters, and writes availability with a space: Google's in_stock is rewritten.
    expect(await summary(f, channelId)).toMatchObject({ template: 'meta_catalog', products_checked: 1, products_with_errors: 0 })
    expect((await diagnostics(f, channelId, '&severity=error')).entries).toEqual([])
    const infos = (await diagnostics(f, channelId, '&severity=info')).entries
    expect(infos.map((e) => [e.code, e.value])).toEqual([
      ['availability_normalised', 'in_stock'],
      ['price_currency_added', '19.9'],
    ])
  })

  it('is empty before the first export, and a generic channel checks nothing', async () => {
    const f = await importFixture(t)
    const channel = await googleChannel(f)
    expect(await summary(f, channel.id)).toMatchObject({ products_checked: 0, readiness_score: null, exported_at: null })
    expect(await diagnostics(f, channel.id)).toEqual({ entries: [], total: 0 })
    const stream = await f.createStream()
    await f.attach(stream)
    await f.upload(stream, [goodProduct('a', { price: 'ten' })])
    const generic = await createChannel(f, { export_name: 'my own label', format: 'csv' })
    expect(generic).toMatchObject({ template: 'generic' })
    await f.run('all')
    expect(await summary(f, generic.id)).toMatchObject({ template: 'generic', products_checked: 1, products_exported: 1, readiness_score: 1, by_code: [] })
  })
})

describe('a run exporting a channel whose products fail checks', () => {
  it('reports one site error per failing code with the count of products, never one per product', async () => {
    const f = await importFixture(t)
    // p0–p4 fail both: left out for the price, with the category's warning too.
    const rows = Array.from({ length: 40 }, (_, i) =>
      goodProduct(`p${i}`, i < 5 ? { price: 'ten', google_product_category: '' } : i < 25 ? { price: 'ten' } : { google_product_category: '' }),
    )
    await exportedChannel(f, rows)
    const errors = (await f.errors()).filter((e) => e.error === '2008' || e.error === '2009')
    expect(errors.map((e) => [e.error, e.type, e.classification, JSON.parse(e.data) as unknown])).toEqual(
      expect.arrayContaining([
        ['2008', 'Warning', 'medium', expect.objectContaining({ code: 'price_invalid_price', products: 25, severity: 'error' })],
        ['2009', 'Warning', 'low', expect.objectContaining({ code: 'google_product_category_missing', products: 20, severity: 'warning' })],
      ]),
    )
    expect(errors).toHaveLength(2)
    expect(errors.find((e) => e.error === '2008')?.message).toMatch(/25 products left out of the feed: price is not a price/)
    expect(errors.find((e) => e.error === '2009')?.message).toMatch(/^Channel \d+: 20 products with this warning: /)
  })
})

describe('saving a channel with a template', () => {
  it('picks the template by export_name, and refuses a format, currency or threshold it cannot use with a 400 naming the field', async () => {
    const f = await importFixture(t)
    const created = await googleChannel(f, { format: undefined, readiness_threshold: 0.9 })
    expect(created).toMatchObject({ template: 'google_shopping', format: 'xml', currency: 'EUR', readiness_threshold: 0.9, validation_mode: 'exclude' })
    const path = `/sites/${f.site.id}/channels`
    for (const [body, message] of [
      [{ format: 'ndjson' }, /format: the google_shopping template's channel reads xml, tsv, not ndjson/],
      [{ currency: 'EURO' }, /currency: "EURO" is not an ISO 4217 currency code/],
      [{ readiness_threshold: 1.5 }, /readiness_threshold: must be a number from 0 to 1/],
      [{ readiness_threshold: 'high' }, /readiness_threshold/],
      [{ readiness_threshold: '0x1' }, /readiness_threshold: must be a number from 0 to 1/],
      [{ validation_mode: 'strict' }, /validation_mode: must be (one of )?exclude/],
    ] as const) {
      const response = await f.c.post(path, { name: 'G', export_name: 'google_shopping', ...body })
      expect(response.statusCode, JSON.stringify(body)).toBe(400)
      expect(response.json<{ message: string }>().message).toMatch(message)
      const update = await f.c.put(`${path}/${created.id}`, body)
      expect(update.statusCode, JSON.stringify(body)).toBe(400)
    }
    const cleared = await f.c.put(`${path}/${created.id}`, { currency: '', readiness_threshold: '' })
    expect(cleared.json<{ Channels: unknown[] }>().Channels[0]).toMatchObject({ currency: null, readiness_threshold: null, template: 'google_shopping' })
    // A label of the client's own, as clients have always sent, keeps exporting unchecked.
    expect(await createChannel(f, { export_name: 'google-shopping', format: 'csv' })).toMatchObject({ template: 'generic' })
  })
})
