import escapeHtml from 'escape-html'
import { describe, expect, it } from 'vitest'
import { createChannel } from '../helpers/clients.js'
import { importFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { goodProduct } from '../templates/template-fixture.js'
import { consoleUser } from './console-session.js'
import { elementWith, textOf, unescapeAttribute } from './held-site.js'

// The product page (issue 31) through HTTP: one product's rows in the import stage and each
// channel's stage with every check of it, linked from the product browser and the diagnostics;
// hostile ids (markup, quotes, '/', unicode, dot segments, 1,000 bytes) escaped on the page and
// round-tripping through their links; a product no stage has, and another account's site, 404.

const t = useTestApp(HIGH_LIMITS)

const HOSTILE_IDS = [`<b>"x'</b>&amp;`, 'a/b c', 'ünï©ødé ✓ 商品', '..', '%2F?#', 'L'.repeat(1000)]

async function shop() {
  const f = await importFixture(t, { title: 'Product shop' })
  const stream = await f.createStream()
  await f.attach(stream)
  const rows = [
    goodProduct('good', { price: '19.90 EUR' }),
    goodProduct('rewritten', { price: '19.90 EUR', availability: 'In Stock' }),
    ...HOSTILE_IDS.map((id) => goodProduct(id, { price: 'ten', link: 'https://shop.example.com/p/x', image_link: 'https://cdn.example.com/x.jpg' })),
  ]
  expect((await f.upload(stream, rows)).statusCode).toBe(202)
  const google = await createChannel(f, { name: 'Google DE', export_name: 'google_shopping', format: 'xml', currency: 'EUR' })
  const csv = await createChannel(f, { name: 'CSV all', export_name: 'generic', format: 'csv' })
  expect((await f.run('all')).status).toBe('success')
  const user = await consoleUser(t.app, f.account.xAuthToken)
  return { f, stream, google, csv, user }
}

/** The product links of a page: id → href, as a browser reads them. */
function productLinks(body: string): Map<string, string> {
  const links = new Map<string, string>()
  for (const match of body.matchAll(/<a href="(\/console\/sites\/\d+\/products?(?:\/|\?id=)[^"]*)">([^<]*)<\/a>/g)) {
    links.set(unescapeAttribute(match[2] ?? ''), unescapeAttribute(match[1] ?? ''))
  }
  return links
}

describe('the product page', () => {
  it("shows a product's row in the import stage and each channel's, with every check of it per channel", async () => {
    const { f, google, csv, user } = await shop()
    const page = await user.get(`/console/sites/${f.site.id}/products/rewritten`)
    expect(page.status, page.body).toBe(200)
    const text = textOf(page.body)
    expect(text).toContain('Product rewritten')
    expect(textOf(elementWith(page.body, 'aria-labelledby="import-heading"'))).toMatch(/availability In Stock/)
    expect(text).toContain('The site has no enabled rules')
    const inGoogle = textOf(elementWith(page.body, `data-channel="${google.id}"`, 'article'))
    expect(inGoogle).toContain('in the feed')
    expect(inGoogle).toMatch(/availability availability_normalised info .* In Stock/)
    // The stage keeps the value as it came; the feed's line has it in the channel's spelling.
    expect(inGoogle).toMatch(/availability In Stock/)
    expect(inGoogle).toContain('<g:availability>in_stock</g:availability>')
    const inCsv = textOf(elementWith(page.body, `data-channel="${csv.id}"`, 'article'))
    expect(inCsv).toContain('in the feed')
    expect(inCsv).toContain('It passes every check of the generic template')

    const failing = await user.get(`/console/sites/${f.site.id}/products/a%2Fb%20c`)
    expect(failing.status).toBe(200)
    const leftOut = textOf(elementWith(failing.body, `data-channel="${google.id}"`, 'article'))
    expect(leftOut).toContain('left out')
    expect(leftOut).toMatch(/price price_invalid_price error .* ten /)
  }, 60_000)

  it("shows a mapped channel's row as its last export mapped it, also after an import changed the product", async () => {
    const { f, stream, google } = await shop()
    const mapping = [
      { column: 'sku', source: 'id' },
      { column: 'headline', source: 'title' },
      { column: 'shop', value: 'Acme <Outdoor>' },
    ]
    const csv = await createChannel(f, { name: 'Mapped CSV', export_name: 'generic', format: 'csv', mapping })
    expect((await f.run('export-all')).status).toBe('success')
    expect((await f.upload(stream, [goodProduct('good', { title: 'Renamed shirt', price: '19.90 EUR' })])).statusCode).toBe(202)
    expect((await f.run('import')).status).toBe('success')
    const user = await consoleUser(t.app, f.account.xAuthToken)
    const page = await user.get(`/console/sites/${f.site.id}/products/good`)
    expect(page.status, page.body).toBe(200)
    expect(textOf(elementWith(page.body, 'aria-labelledby="import-heading"'))).toMatch(/title Renamed shirt/)
    const inCsv = textOf(elementWith(page.body, `data-channel="${csv.id}"`, 'article'))
    expect(inCsv).toMatch(/sku good/)
    expect(inCsv).toMatch(/headline Shirt good/)
    expect(inCsv).toContain('shop Acme <Outdoor>')
    expect(inCsv).toContain('good,Shirt good,Acme <Outdoor>')
    expect(textOf(elementWith(page.body, `data-channel="${google.id}"`, 'article'))).toContain('in the feed')
    // A product the import left alone: its row refers to the import row, mapped as the export mapped it.
    const untouched = await user.get(`/console/sites/${f.site.id}/products/rewritten`)
    expect(untouched.status, untouched.body).toBe(200)
    const itsRow = textOf(elementWith(untouched.body, `data-channel="${csv.id}"`, 'article'))
    expect(itsRow).toMatch(/headline Shirt rewritten/)
    expect(itsRow).toContain('shop Acme <Outdoor>')
    expect(itsRow).toContain('rewritten,Shirt rewritten,Acme <Outdoor>')
  })

  it("shows the product's intermediate row through the site's rules, or that they exclude it", async () => {
    const { f, user } = await shop()
    const rule = (body: Record<string, unknown>) => f.c.post(`/sites/${f.site.id}/rules`, body)
    expect((await rule({ attribute: 'title', then: [{ action: 'append', value: 'by {brand}', separator: ' ' }] })).statusCode).toBe(201)
    expect((await rule({ if: { all: [{ attribute: 'id', operator: 'equals', value: 'good' }] }, then: [{ action: 'exclude' }] })).statusCode).toBe(201)
    const page = await user.get(`/console/sites/${f.site.id}/products/rewritten`)
    expect(page.status, page.body).toBe(200)
    const intermediate = textOf(elementWith(page.body, 'aria-labelledby="intermediate-heading"'))
    expect(intermediate).toContain("The import row through the site's rules (2 rules)")
    expect(intermediate).toMatch(/title Shirt rewritten by Acme/)
    expect(textOf(elementWith(page.body, 'aria-labelledby="import-heading"'))).toMatch(/title Shirt rewritten(?! by)/)
    const excluded = await user.get(`/console/sites/${f.site.id}/products/good`)
    expect(textOf(elementWith(excluded.body, 'aria-labelledby="intermediate-heading"'))).toContain("excluded The site's rules leave the product out")
  }, 60_000)

  it('escapes hostile ids and links to each from the product browser and the diagnostics, where the link leads back to it', async () => {
    const { f, google, user } = await shop()
    const browser = await user.get(`/console/sites/${f.site.id}/products?fields=id,title`)
    const diagnostics = await user.get(`/console/sites/${f.site.id}/channels/${google.id}/diagnostics?code=price_invalid_price`)
    for (const body of [browser.body, diagnostics.body]) {
      expect(body).not.toContain(`<b>"x'`)
      const links = productLinks(body)
      for (const id of HOSTILE_IDS) {
        const href = links.get(id)
        expect(href, id).toBeDefined()
        const page = await user.get(href!)
        expect(page.status, href).toBe(200)
        expect(page.body).toContain(`<h1>Product ${escapeHtml(id)}</h1>`)
        expect(page.body).not.toContain(`<b>"x'`)
      }
    }
    expect(productLinks(browser.body).get('..')).toBe(`/console/sites/${f.site.id}/product?id=..`)
    expect(productLinks(browser.body).get('L'.repeat(1000))).toBe(`/console/sites/${f.site.id}/product?id=${'L'.repeat(1000)}`)
    expect(productLinks(browser.body).get('a/b c')).toBe(`/console/sites/${f.site.id}/products/a%2Fb%20c`)
  }, 60_000)

  it("runs the product browser's filter as typed: one past the filter limit is refused with its message, not cut to fit", async () => {
    const { f, user } = await shop()
    const fits = `id = 'good'${' '.repeat(989)}`
    expect(fits).toHaveLength(1000)
    const shown = await user.get(`/console/sites/${f.site.id}/products?fields=id&filter=${encodeURIComponent(fits)}`)
    expect(shown.status, textOf(shown.body).slice(0, 400)).toBe(200)
    expect([...productLinks(shown.body).keys()]).toEqual(['good'])
    const longer = await user.get(`/console/sites/${f.site.id}/products?fields=id&filter=${encodeURIComponent(`${fits} OR id = 'rewritten'`)}`)
    expect(longer.status).toBe(400)
    expect(textOf(longer.body)).toContain('longer than 1000 characters')
    expect(productLinks(longer.body).size).toBe(0)
  })

  it('is a 404 page for a product no stage has, an id no row can have, and the site of another account', async () => {
    const { f, user } = await shop()
    for (const url of [
      `/console/sites/${f.site.id}/products/nope`,
      `/console/sites/${f.site.id}/product?id=a%00b`,
      `/console/sites/${f.site.id}/product?id=${'L'.repeat(1001)}`,
      `/console/sites/${f.site.id}/product`,
    ]) {
      const missing = await user.get(url)
      expect(missing.status, url).toBe(404)
      expect(missing.body).toMatch(/^<!doctype html>/)
    }
    const other = await importFixture(t, { title: 'Somebody else' })
    const stranger = await consoleUser(t.app, other.account.xAuthToken)
    const refused = await stranger.get(`/console/sites/${f.site.id}/products/good`)
    expect(refused.status).toBe(404)
    expect(refused.body).not.toContain('Product shop')
  }, 60_000)
})
