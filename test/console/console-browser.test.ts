import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp, type TestAccount } from '../helpers/test-app.js'
import { launchBrowser, screenshot, signedInPage } from './browser.js'
import { eventually } from '../helpers/eventually.js'
import { recordUpload, startReceiver, type Receiver } from '../webhooks/receiver.js'
import { listenOnFreePort } from '../helpers/listen.js'

// The console as a person uses it, in a real headless Chromium (issue 22): sign in with the
// credential the CLI printed, find a site, read why its last import failed, start a run and watch it
// end, page through products with a filter, and be refused another account's site. With
// CONSOLE_SCREENSHOTS=1 the main pages are saved under docs/ for the README.

// Webhook receivers on 127.0.0.1 (plain http allowed) with short back-offs, so that a receiver
// answering 500 makes a failed delivery within seconds.
const t = useTestApp({
  ...HIGH_LIMITS,
  CONSOLE_OPERATOR_TOKEN: 'operator-token-for-the-browser-test',
  ALLOW_PRIVATE_DESTINATIONS: 'true',
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_POLL_SECONDS: '0.2',
  WEBHOOK_RETRY_BASE_SECONDS: '0.2',
  WEBHOOK_RETRY_HOURS: '0.001',
})
const receivers: Receiver[] = []
let base = ''
let browser: Browser
let shop: ImportFixture
let empty: ImportFixture
let other: ImportFixture
let streamId = ''

beforeAll(async () => {
  base = `http://127.0.0.1:${await listenOnFreePort(t.app)}`
  shop = await importFixture(t, { title: 'Shop DE' })
  streamId = await shop.createStream()
  const rows = Array.from({ length: 60 }, (_, i) => ({ id: `SKU${String(i).padStart(3, '0')}`, title: `Shirt ${i}`, price: String(i) }))
  const lines = [...rows.map((row) => JSON.stringify(row)), '{"title":"no id"}', '{"id":"broken"'].join('\n')
  expect((await shop.upload(streamId, lines)).statusCode).toBe(202)
  await shop.attach(streamId)
  const channel = await shop.platform('POST', `/sites/${shop.site.id}/channels`, {
    name: 'Google DE',
    export_name: 'google-shopping',
    format: 'csv',
    filenames: [{ type: null, filename: 'google-de.csv' }],
  })
  expect(channel.statusCode, channel.body).toBe(201)
  expect((await shop.run('all')).status).toBe('success')
  // A second site of the same account whose import fails: its stream has no products (1001).
  empty = await importFixture(t, { title: 'Empty shop' }, shop.c)
  await empty.attach(await empty.createStream())
  expect((await empty.run('import')).status).toBe('failed')
  other = await importFixture(t, { title: 'Somebody else' })
  browser = await launchBrowser()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await t.app.close()
  for (const receiver of receivers) await receiver.close()
})

const signedIn = (account: TestAccount, credential = account.xAuthToken) => signedInPage(browser, base, credential)

describe('the console in a browser', () => {
  it('signs in with the X-Auth-Token value, lists the sites and opens one', async () => {
    const page = await signedIn(shop.account)
    await expect(page.getByRole('heading', { name: 'Overview' }).isVisible()).resolves.toBe(true)
    await expect(page.getByRole('link', { name: 'Empty shop' }).isVisible()).resolves.toBe(true)
    await screenshot(page, 'overview')
    await page.getByRole('link', { name: 'Shop DE' }).click()
    await page.waitForURL(`${base}/console/sites/${shop.site.id}`)
    await expect(page.getByRole('heading', { name: 'Runs' }).isVisible()).resolves.toBe(true)
    expect(await page.locator('main').innerText()).toContain('Imported 60 products')
    // The runs table gives each run's counts: the `all` run imported and exported 60 products.
    expect(await page.locator('section[aria-labelledby=runs-heading]').innerText()).toContain('60 imported, 60 exported')
    // The channel's last export and its feed file, downloaded from the link the page shows.
    const channels = await page.locator('section[aria-labelledby=channels-heading]').innerText()
    expect(channels).toContain('60 products — 60 new, 0 modified, 0 deleted, 0 unchanged')
    const feed = await page.getByRole('link', { name: 'google-de.csv' }).getAttribute('href')
    const download = await fetch(`${base}${feed}`)
    expect(download.status).toBe(200)
    expect(await download.text()).toContain('SKU059')
    await page.close()
  })

  it("fits a phone's width: a channel's and a site's rule editor scroll no page sideways at 390 px", async () => {
    const page = await signedIn(shop.account)
    await page.setViewportSize({ width: 390, height: 800 })
    const channelId = (await shop.platform('GET', `/sites/${shop.site.id}/channels`)).json<{ Channels: { id: string }[] }>().Channels[0]?.id
    for (const path of [`/console/sites/${shop.site.id}/channels/${channelId}/rules/new`, `/console/sites/${shop.site.id}/rules/new`]) {
      await page.goto(`${base}${path}`)
      await expect(page.getByRole('textbox', { name: 'Description' }).isVisible(), path).resolves.toBe(true)
      expect(await page.evaluate<number>('document.documentElement.scrollWidth'), path).toBeLessThanOrEqual(390)
    }
    await page.close()
  })

  it('shows why the last import of a site failed, and which upload lines were refused and why', async () => {
    const page = await signedIn(shop.account, shop.account.token)
    await page.getByRole('link', { name: 'Empty shop' }).click()
    const errors = await page.locator('section[aria-labelledby=errors-heading]').innerText()
    expect(errors).toContain('1001')
    expect(errors).toMatch(/no products/i)
    await page.goto(`${base}/console/streams/${streamId}`)
    const batches = await page.locator('main').innerText()
    expect(batches).toContain('Missing "id" attribute')
    expect(batches).toContain('{"title":"no id"}')
    // Each stage's end in the console's one time format, with its zone.
    const completed = page.locator('article.batch tbody tr').first().locator('td').last()
    expect(await completed.innerText()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/)
    expect(await completed.locator('time').getAttribute('datetime')).toMatch(/Z$/)
    await screenshot(page, 'stream')
    await page.close()
  })

  it('starts a run and shows it end without a reload', async () => {
    const page = await signedIn(shop.account)
    await page.goto(`${base}/console/sites/${shop.site.id}`)
    await page.getByLabel('Start a run').selectOption('import')
    await page.getByRole('button', { name: 'Start' }).click()
    const live = page.locator('[data-poll]')
    await live.waitFor()
    const url = page.url()
    await page.locator('[data-ended]').waitFor({ timeout: 60_000 })
    expect(await live.getAttribute('data-ended')).toBe('success')
    expect(await live.locator('[data-field=status]').innerText()).toBe('success')
    // The runs table and the charts are fetched again and swapped in: the run's row says it ended.
    await page.locator('[data-refreshed]').waitFor()
    const newest = page.locator('section[aria-labelledby=runs-heading] tbody tr').first()
    expect(await newest.innerText()).toContain(url.slice(url.indexOf('run=') + 4, url.indexOf('run=') + 12))
    expect(await newest.locator('.badge').innerText()).toBe('success')
    expect(page.url()).toBe(url)
    await screenshot(page, 'site')
    await page.close()
  })

  it('pages through products with a filter, and shows a bad filter its message', async () => {
    const page = await signedIn(shop.account)
    await page.goto(`${base}/console/sites/${shop.site.id}/products`)
    await page.getByLabel('Filter').fill('price >= 10')
    await page.getByLabel('Fields').fill('id,price')
    await page.getByRole('button', { name: 'Show' }).click()
    const firstPage = await page.locator('main table tbody tr').allInnerTexts()
    expect(firstPage).toHaveLength(25)
    expect(firstPage[0]).toContain('SKU010')
    await screenshot(page, 'products')
    await page.getByRole('link', { name: 'Next page' }).click()
    const secondPage = await page.locator('main table tbody tr').allInnerTexts()
    expect(secondPage).toHaveLength(25)
    expect(secondPage[0]).toContain('SKU035')
    await page.getByLabel('Filter').fill('colour = 1')
    await page.getByRole('button', { name: 'Show' }).click()
    expect(await page.getByRole('alert').innerText()).toContain('unknown column "colour"')
    await page.close()
  })

  it("lists a channel's left-out products on its diagnostics page and filters them by code", async () => {
    const feed = await importFixture(t, { title: 'Feed shop' }, shop.c)
    const feedStream = await feed.createStream()
    const rows = [
      { id: 'A1', title: 'Shirt', price: 'ten' },
      { id: 'A2', title: 'Shoe', price: '12.00 EUR' },
    ]
    expect((await feed.upload(feedStream, rows)).statusCode).toBe(202)
    await feed.attach(feedStream)
    const channel = await feed.platform('POST', `/sites/${feed.site.id}/channels`, { name: 'Google FR', export_name: 'google_shopping', format: 'xml' })
    expect(channel.statusCode, channel.body).toBe(201)
    expect((await feed.run('all')).status).toBe('success')

    const page = await signedIn(shop.account)
    await page.goto(`${base}/console/sites/${feed.site.id}`)
    await page.getByRole('link', { name: 'Diagnostics' }).click()
    await expect(page.getByRole('heading', { name: 'Diagnostics of Google FR' }).isVisible()).resolves.toBe(true)
    expect(await page.locator('.cards').innerText()).toMatch(/2\s*left out/)
    const all = await page.locator('section[aria-labelledby=list-heading] tbody tr').allInnerTexts()
    expect(all.some((row) => row.startsWith('A2'))).toBe(true)
    await page.getByLabel('Code', { exact: true }).selectOption('price_invalid_price')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/code=price_invalid_price/)
    const narrowed = await page.locator('section[aria-labelledby=list-heading] tbody tr').allInnerTexts()
    expect(narrowed).toHaveLength(1)
    expect(narrowed[0]).toContain('A1')
    expect(narrowed[0]).toContain('ten')
    await screenshot(page, 'diagnostics')
    await page.close()
  })

  it('retries a failed webhook delivery from the webhooks page', async () => {
    const receiver = await startReceiver()
    receivers.push(receiver)
    receiver.fallback = { status: 500, body: 'receiver down' }
    const created = await shop.c.post('/webhooks', { url: receiver.url, events: ['batch.uploaded'], description: 'ERP' })
    expect(created.statusCode, created.body).toBe(201)
    const webhookId = created.json<{ Webhooks: { id: string }[] }>().Webhooks[0]!.id
    await recordUpload(t.db, shop.account.accountId)
    const deliveries = async () => (await shop.c.get(`/webhooks/${webhookId}/deliveries`)).json<{ Deliveries: { id: string; status: string }[] }>().Deliveries
    const failed = await eventually(async () => (await deliveries()).find((d) => d.status === 'failed'), 'a failed delivery')
    // Failing for good may have disabled the subscription: on again, as a person would through the API.
    expect((await shop.c.put(`/webhooks/${webhookId}`, { active: true })).statusCode).toBe(200)
    receiver.fallback = { status: 200, body: 'ok' }

    const page = await signedIn(shop.account)
    await page.getByRole('link', { name: 'Webhooks' }).click()
    const row = page.locator(`#delivery-${failed.id}`)
    expect(await row.innerText()).toContain('failed')
    expect(await row.innerText()).toContain('500')
    await screenshot(page, 'webhooks')
    await page.getByRole('button', { name: `Retry delivery #${failed.id}` }).click()
    await page.waitForURL(/retried=/)
    await eventually(async () => ((await deliveries()).find((d) => d.id === failed.id)?.status === 'delivered' ? true : undefined), 'the retried delivery')
    await page.reload()
    expect(await page.locator(`#delivery-${failed.id}`).innerText()).toContain('delivered')
    await page.close()
  })

  it("is refused another account's site by its URL, and the operator view without the operator token", async () => {
    const page = await signedIn(shop.account)
    const response = await page.goto(`${base}/console/sites/${other.site.id}`)
    expect(response?.status()).toBe(404)
    expect(await page.locator('main').innerText()).not.toContain('Somebody else')
    const operator = await page.goto(`${base}/console/operator`)
    expect(operator?.status()).toBe(403)
    expect(await page.getByRole('alert').innerText()).toContain('operator token')
    await page.close()
  })
})
