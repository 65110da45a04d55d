import { beforeAll, describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { client } from '../helpers/clients.js'

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

let f: ImportFixture
const ROWS = [
  { id: 'A1', gtin: '111', title: "O'Brien shirt", price: '9.5', ___cost: '4' },
  { id: 'A2', gtin: '222', title: 'Shoe', price: '10', brand: 'Acme' },
  { id: 'A3', gtin: '', title: 'Hat 100%', price: 'abc', brand: 'Acme' },
  { id: 'B1', gtin: '444', title: 'Sock', price: '10.0' },
  { id: 'B2', gtin: '555', title: 'Scarf', price: '12.75', brand: 'Globex' },
]

beforeAll(async () => {
  f = await importFixture(t)
  const stream = await f.createStream()
  await f.attach(stream)
  await f.upload(stream, ROWS)
  expect((await f.run()).status).toBe('success')
})

const read = (query = '', path = `/product/v2/site/${f.site.id}/stage/import/0`) =>
  t.request({ method: 'GET', url: `${path}${query ? `?${query}` : ''}`, headers: f.account.platform })
const ids = async (query: string) => {
  const response = await read(query)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ products: { id: string }[] }>().products.map((row) => row.id)
}

describe('product data reads', () => {
  it('returns every visible column of every row in stage order, empty where a row has no value', async () => {
    const response = await read()
    expect(response.statusCode).toBe(200)
    const body = response.json<{ success: boolean; products: Record<string, string>[] }>()
    expect(body.success).toBe(true)
    expect(body.products[0]).toEqual({ id: 'A1', gtin: '111', title: "O'Brien shirt", price: '9.5', brand: '' })
    expect(Object.keys(body.products[0] ?? {})).toEqual(['id', 'gtin', 'title', 'price', 'brand'])
    expect(body.products.map((row) => row.id)).toEqual(['A1', 'A2', 'A3', 'B1', 'B2'])
  })

  it('answers the request forms existing clients send', async () => {
    const compat = await read(
      'filter=id+%3D+%27A2%27&limit=1&offset=0&fields%5B0%5D=id&fields%5B1%5D=gtin&hidden=0',
      `/product/v2/site/${f.site.id}/stage/intermediate/`,
    )
    expect(compat.statusCode, compat.body).toBe(200)
    expect(compat.json()).toEqual({ success: true, products: [{ id: 'A2', gtin: '222' }] })
    expect((await read('fields=gtin,id&limit=1')).json()).toEqual({ success: true, products: [{ gtin: '111', id: 'A1' }] })
    expect((await read('fields=title&fields=id&limit=1')).json()).toEqual({ success: true, products: [{ title: "O'Brien shirt", id: 'A1' }] })
  })

  it('reads the stage names of the PHP client: intermediate_preview is the import stage', async () => {
    const preview = await read('limit=1&fields%5B0%5D=id', `/product/v2/site/${f.site.id}/stage/intermediate_preview/`)
    expect(preview.statusCode, preview.body).toBe(200)
    expect(preview.json()).toEqual({ success: true, products: [{ id: 'A1' }] })
    const props = await read('', `/product/v2/site/${f.site.id}/stage/intermediate_preview/0/properties/`)
    expect(props.json()).toMatchObject({ success: true, columns: ['id', 'gtin', 'title', 'price', 'brand'] })
    for (const name of ['export', 'export_preview', 'channel_preview']) {
      const missing = await read('', `/product/v2/site/${f.site.id}/stage/${name}/999999`)
      expect(missing.statusCode).toBe(404)
      expect(missing.json<{ message: string }>().message).toMatch(/Channel 999999 of site/)
    }
  })

  it('pages with limit and offset, every row once', async () => {
    const seen: string[] = []
    for (let offset = 0; offset < 10; offset += 2) seen.push(...(await ids(`limit=2&offset=${offset}`)))
    expect(seen).toEqual(['A1', 'A2', 'A3', 'B1', 'B2'])
  })

  it.each([
    ['limit=0', /limit/],
    ['limit=1001', /limit/],
    ['limit=x', /limit/],
    ['offset=-1', /offset/],
    ['hidden=2', /hidden/],
    ['fields=id,colour', /unknown column "colour"/],
    ['fields=___cost', /hidden column/],
  ])('refuses %s with a 400 naming the parameter', async (query, message) => {
    const response = await read(query)
    expect(response.statusCode).toBe(400)
    expect(response.json()).toEqual({ success: false, message: expect.stringMatching(message) })
  })

  it('shows hidden columns only with hidden=1', async () => {
    const props = (hidden: string) =>
      t.request({ method: 'GET', url: `/product/v2/site/${f.site.id}/stage/intermediate/0/properties/${hidden}`, headers: f.account.platform })
    expect((await props('')).json()).toEqual({ success: true, columns: ['id', 'gtin', 'title', 'price', 'brand'], products: 5 })
    expect((await props('?hidden=1')).json()).toEqual({ success: true, columns: ['id', 'gtin', 'title', 'price', '___cost', 'brand'], products: 5 })
    const withHidden = (await read('hidden=1&limit=1')).json<{ products: Record<string, string>[] }>()
    expect(withHidden.products[0]).toMatchObject({ ___cost: '4' })
    expect((await read('hidden=1&fields=id,___cost&limit=1')).json()).toEqual({ success: true, products: [{ id: 'A1', ___cost: '4' }] })
  })

  it('filters with the SQL condition language', async () => {
    expect(await ids(`filter=${encodeURIComponent("brand = 'Acme'")}`)).toEqual(['A2', 'A3'])
    expect(await ids(`filter=${encodeURIComponent('price > 9.9')}`)).toEqual(['A2', 'B1', 'B2'])
    expect(await ids(`filter=${encodeURIComponent('price = 10')}`)).toEqual(['A2', 'B1'])
    expect(await ids(`filter=${encodeURIComponent("title LIKE 'S%' AND NOT brand IS NULL")}`)).toEqual(['A2', 'B2'])
    expect(await ids(`filter=${encodeURIComponent("gtin IS NULL OR title = 'O''Brien shirt'")}`)).toEqual(['A1', 'A3'])
    expect(await ids(`filter=${encodeURIComponent("\"price\" BETWEEN 10 AND 12 AND `id` IN ('A2', 'B1', 'B2')")}`)).toEqual(['A2', 'B1'])
  })

  it.each(["id = '' OR pg_sleep(10)", '1=1; DROP TABLE stage_product', "colour = 'red'", 'id IN (SELECT id FROM account)'])(
    'refuses the filter %s with a 400 and changes nothing',
    async (filter) => {
      const response = await read(`filter=${encodeURIComponent(filter)}`)
      expect(response.statusCode).toBe(400)
      expect(response.json<{ message: string }>().message).toMatch(/filter/)
      expect(await ids('')).toHaveLength(5)
    },
  )

  it('answers 404 for unknown stages, channels and another account’s site', async () => {
    expect((await read('', `/product/v2/site/${f.site.id}/stage/export/0`)).statusCode).toBe(404)
    expect((await read('', `/product/v2/site/${f.site.id}/stage/channel/12`)).statusCode).toBe(404)
    expect((await read('', `/product/v2/site/${f.site.id}/stage/import/5`)).statusCode).toBe(404)
    // A product id where the stage's id goes names no stage: the answer says which stage and what to do.
    const productAsId = await read('', `/product/v2/site/${f.site.id}/stage/intermediate/SKU1`)
    expect(productAsId.statusCode).toBe(404)
    expect(productAsId.json<{ message: string }>().message).toMatch(
      /^The intermediate stage has no id SKU1; leave it out or use 0 \(a product is read with filter=id/,
    )
    const other = await client(t, 'Other account')
    const foreign = await t.request({ method: 'GET', url: `/product/v2/site/${f.site.id}/stage/import`, headers: other.account.platform })
    expect(foreign.statusCode).toBe(404)
    expect(foreign.json()).toEqual({ success: false, message: expect.any(String) })
    const props = await t.request({ method: 'GET', url: `/product/v2/site/${f.site.id}/stage/import/properties`, headers: other.account.platform })
    expect(props.statusCode).toBe(404)
    const anonymous = await t.request({ method: 'GET', url: `/product/v2/site/${f.site.id}/stage/import` })
    expect(anonymous.statusCode).toBe(401)
  })
})
