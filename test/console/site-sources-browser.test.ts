import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client } from '../helpers/clients.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { startFeedServer, type FeedServer } from '../helpers/feed-server.js'
import { listenOnFreePort } from '../helpers/listen.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { launchBrowser, screenshot, signedInPage } from './browser.js'

// A site's fetched sources on its console page (issue 34), in a real headless Chromium: where each
// source reads from (never its credentials), and what its last fetch found: the products, the refused
// records grouped by message with their lines, or why it failed. Another account's site is a 404 page.
const t = useTestApp({ ...HIGH_LIMITS, ALLOW_PRIVATE_DESTINATIONS: 'true', RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

const PASSWORD = 'console-s3cret-pw'
let base = ''
let browser: Browser
let feeds: FeedServer
let f: ImportFixture

beforeAll(async () => {
  feeds = await startFeedServer()
  base = `http://127.0.0.1:${await listenOnFreePort(t.app)}`
  f = await importFixture(t, { title: 'Feed shop' })
  feeds.route('/export/products.csv', (req, res) => {
    const expected = `Basic ${Buffer.from(`feeds:${PASSWORD}`).toString('base64')}`
    if (req.headers.authorization !== expected) return void res.writeHead(401).end()
    res.writeHead(200, { 'content-type': 'text/csv' }).end('sku;title;price\nA-1;Shirt;12,90 EUR\n;No id;1 EUR\nA-2;Shoe;59 EUR\n;Also none;2 EUR\n')
  })
  const good = await f.c.post(`/sites/${f.site.id}/sources`, {
    type: 'feed_url',
    description: 'Shop export',
    url: `${feeds.origin}/export/products.csv`,
    delimiter: ';',
    id_column: 'sku',
    auth: { type: 'basic', user: 'feeds', password: PASSWORD },
  })
  expect(good.statusCode, good.body).toBe(201)
  const broken = await f.c.post(`/sites/${f.site.id}/sources`, { type: 'feed_url', description: 'Old export', url: `${feeds.origin}/gone.xml`, import_type: 2 })
  expect(broken.statusCode, broken.body).toBe(201)
  const run = await f.run('import')
  expect(run.status, run.message).toBe('success')
  browser = await launchBrowser()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await t.app.close()
  await feeds?.close()
})

describe('the sources of a site in the console', () => {
  it('shows where each source reads from, what its last fetch found, and never a credential', async () => {
    const page = await signedInPage(browser, base, f.account.xAuthToken)
    await page.goto(`${base}/console/sites/${f.site.id}`)
    const section = page.getByRole('region', { name: 'Data sources' })
    const good = section.getByRole('row').filter({ hasText: 'Shop export' })
    await expect(good.innerText()).resolves.toContain(`csv from ${feeds.origin}/export/products.csv`)
    const goodText = await good.innerText()
    expect(goodText).toMatch(/imported .*: 2 products, 2 refused/)
    expect(goodText).toContain('2 × the id column "sku" is missing or empty (lines 3, 5)')
    const broken = await section.getByRole('row').filter({ hasText: 'Old export' }).innerText()
    expect(broken).toContain('failed')
    expect(broken).toContain('answered HTTP 404 Not Found')
    expect(broken).toContain('additional')
    expect(await page.content()).not.toContain(PASSWORD)
    await screenshot(page, 'console-sources')
  })

  it("answers another account's site with a 404 page", async () => {
    const other = await client(t)
    const page = await signedInPage(browser, base, other.account.xAuthToken)
    const response = await page.goto(`${base}/console/sites/${f.site.id}`)
    expect(response?.status()).toBe(404)
  })
})
