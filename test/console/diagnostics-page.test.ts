import { describe, expect, it } from 'vitest'
import { createChannel } from '../helpers/clients.js'
import { importFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { goodProduct } from '../templates/template-fixture.js'
import { consoleUser } from './console-session.js'

// A channel's diagnostics in the console (issue 24), through HTTP: which products a Google Shopping
// channel leaves out and why, the list filtered by code, a bad filter's message with a 400, a
// hostile value escaped, another account's channel a 404; then one product fixed at the source
// and the next export leaving out exactly one product fewer.

const t = useTestApp(HIGH_LIMITS)

const HOSTILE_TITLE = `<script>alert(1)</script>${'x'.repeat(126)}`

/** A product Google Shopping takes as it is, its price with the currency written out. */
function product(id: string, overrides: Record<string, string> = {}): Record<string, string> {
  return goodProduct(id, { price: '19.90 EUR', ...overrides })
}

/** The page's text without tags, whitespace collapsed: what a reader sees, in order. */
function textOf(body: string): string {
  return body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ')
}

/** The rows of the diagnostics table, as text. */
function listRows(body: string): string[] {
  const list = body.slice(body.indexOf('id="list-heading"'))
  const tbody = /<tbody>([\s\S]*?)<\/tbody>/.exec(list)?.[1] ?? ''
  return [...tbody.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) => textOf(row[1] ?? '').trim())
}

const ROWS = [product('good'), product('bad-price', { price: 'ten' }), product('bad-title', { title: HOSTILE_TITLE })]

async function googleShop(rows = ROWS) {
  const f = await importFixture(t, { title: 'Diagnosed shop' })
  const streamId = await f.createStream()
  await f.attach(streamId)
  expect((await f.upload(streamId, rows)).statusCode).toBe(202)
  const channel = await createChannel(f, {
    name: 'Google DE',
    export_name: 'google_shopping',
    format: 'xml',
    currency: 'EUR',
    readiness_threshold: 0.5,
    filenames: [{ type: null, filename: 'google-{channel_id}.xml' }],
  })
  expect((await f.run('all')).status).toBe('success')
  const user = await consoleUser(t.app, f.account.xAuthToken)
  return { f, streamId, channel, user, url: `/console/sites/${f.site.id}/channels/${channel.id}/diagnostics` }
}

describe('the diagnostics page of a channel', () => {
  it('shows the left-out products with their code and message, filters by code, and escapes hostile values', async () => {
    const { f, user, url } = await googleShop()
    const site = await user.get(`/console/sites/${f.site.id}`)
    expect(site.status).toBe(200)
    const channels = textOf(site.body.slice(site.body.indexOf('id="channels-heading"')))
    expect(channels).toContain('Template google_shopping · readiness 33.3 % · 1 exported, 2 left out')
    expect(site.body).toContain(`href="${url}"`)

    const page = await user.get(url)
    expect(page.status, page.body).toBe(200)
    const text = textOf(page.body)
    expect(text).toContain('Diagnostics of Google DE')
    expect(page.body).toContain('href="https://support.google.com/merchants/answer/7052112"')
    expect(text).toMatch(/validation mode \w+/)
    expect(text).toContain('33.3 % readiness vs threshold 50 % below')
    expect(text).toContain('3 checked')
    expect(text).toContain('1 exported')
    expect(text).toContain('2 left out')
    expect(page.body).toContain(`href="${url}?code=price_invalid_price#list-heading"`)
    const rows = listRows(page.body)
    expect(rows.find((row) => row.startsWith('bad-price'))).toMatch(/price price_invalid_price error .+ ten/)
    expect(rows.find((row) => row.startsWith('bad-title'))).toMatch(/title title_too_long error/)
    expect(rows.some((row) => row.startsWith('good '))).toBe(false)
    expect(text).toMatch(new RegExp(`1–${rows.length} of ${rows.length}`))

    // The hostile title is shown as text: escaped, never markup.
    expect(page.body).not.toContain('<script>alert(1)')
    expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')

    const byCode = await user.get(`${url}?code=price_invalid_price&severity=&attribute=&id=`)
    expect(byCode.status).toBe(200)
    const narrowed = listRows(byCode.body)
    expect(narrowed).toHaveLength(1)
    expect(narrowed[0]).toMatch(/^bad-price price price_invalid_price error/)
    expect(textOf(byCode.body)).toContain('1–1 of 1')
    expect(byCode.body).toMatch(/<option value="price_invalid_price"\s+selected/)

    const byId = listRows((await user.get(`${url}?id=bad-title`)).body)
    expect(byId.length).toBeGreaterThan(0)
    expect(byId.every((row) => row.startsWith('bad-title '))).toBe(true)
  }, 60_000)

  it('answers a bad filter with its message and a 400 in HTML, and another account a 404', async () => {
    const { f, channel, user, url } = await googleShop()
    for (const [query, message] of [
      ['severity=fatal', 'severity: must be one of error, warning, info'],
      ['code=no_such_code', 'template has no code'],
      ['attribute=colour', 'checks no attribute'],
      ['id=a%00b', 'a product id has no NUL character'],
      // Refused whole, not cut to 1,000 characters that could name another product.
      [`id=${'L'.repeat(1001)}`, 'id: '],
    ]) {
      const refused = await user.get(`${url}?${query}`)
      expect(refused.status, query).toBe(400)
      expect(refused.body).toMatch(/^<!doctype html>/)
      expect(refused.body).toContain('role="alert"')
      expect(textOf(refused.body)).toContain(message)
      // The summary and the form are still there to correct the filter.
      expect(refused.body).toContain('id="summary-heading"')
      expect(refused.body).toContain('<form class="filters"')
    }

    const other = await importFixture(t, { title: 'Somebody else' })
    const theirs = await createChannel(other, { name: 'Theirs', export_name: 'google_shopping', format: 'xml', currency: 'EUR' })
    for (const path of [
      `/console/sites/${other.site.id}/channels/${theirs.id}/diagnostics`,
      `/console/sites/${f.site.id}/channels/${theirs.id}/diagnostics`,
      `/console/sites/${other.site.id}/channels/${channel.id}/diagnostics`,
    ]) {
      const refused = await user.get(path)
      expect(refused.status, path).toBe(404)
      expect(refused.body).not.toContain('Theirs')
    }
  }, 60_000)

  it('pages the list by 50 with links that keep the filters', async () => {
    const rows = Array.from({ length: 55 }, (_, i) => product(`P${String(i).padStart(3, '0')}`, { price: 'ten' }))
    const { user, url } = await googleShop(rows)
    const first = await user.get(`${url}?severity=error`)
    expect(textOf(first.body)).toContain('1–50 of 55')
    expect(listRows(first.body)).toHaveLength(50)
    const next = /<a href="([^"]+)">Next page<\/a>/.exec(first.body)?.[1]?.replace(/&amp;/g, '&')
    expect(next).toBe(`${url}?severity=error&offset=50#list-heading`)
    const second = await user.get(next!.replace(/#.*/, ''))
    expect(textOf(second.body)).toContain('51–55 of 55')
    expect(listRows(second.body)[0]).toMatch(/^P050 /)
    expect(second.body).toContain('Previous page')
    expect(second.body).not.toContain('Next page')
  }, 60_000)

  it('shows a product fixed at the source no longer left out after the next export, the counts moved by one', async () => {
    const { f, streamId, user, url } = await googleShop()
    const before = textOf((await user.get(url)).body)
    expect(before).toContain('2 left out')
    expect(before).toContain('1 exported')

    expect((await f.upload(streamId, [product('bad-price', { price: '12.50 EUR' })])).statusCode).toBe(202)
    expect((await f.run('all')).status).toBe('success')

    const after = await user.get(url)
    const text = textOf(after.body)
    expect(text).toContain('1 left out')
    expect(text).toContain('2 exported')
    expect(text).toContain('66.7 % readiness vs threshold 50 % met')
    const rows = listRows(after.body)
    expect(rows.some((row) => row.startsWith('bad-price '))).toBe(false)
    expect(rows.some((row) => row.startsWith('bad-title '))).toBe(true)
    const codes = after.body.slice(after.body.indexOf('id="codes-heading"'), after.body.indexOf('id="list-heading"'))
    expect(codes).toContain('title_too_long')
    expect(codes).not.toContain('price_invalid_price')

    // The export took up exactly the fixed product: new in the feed, the one already there unchanged.
    const site = textOf((await user.get(`/console/sites/${f.site.id}`)).body)
    expect(site).toContain('2 products — 1 new, 0 modified, 0 deleted, 1 unchanged')
    expect(site).toContain('Template google_shopping · readiness 66.7 % · 2 exported, 1 left out')
  }, 60_000)
})
