import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createChannel, readChannel } from '../helpers/clients.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { listenOnFreePort } from '../helpers/listen.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { inTransaction } from '../../src/db/transaction.js'
import { goodProduct } from '../templates/template-fixture.js'
import { launchBrowser, screenshot, signedInPage } from './browser.js'
import { heldSite, productIds, servedRows, type HeldSite } from './held-site.js'

// Safety stops in the console, in a real headless Chromium (issue 31): a site whose two channels
// are held (a generic CSV channel and a Google Shopping one, 200 products each, 150 deleted). The
// overview shows their banners with the figures; Release publishes the CSV channel's held export;
// the runs table says "success with warnings"; the product page shows a product's rows and checks;
// the diagnostics' code filter offers only the codes that occurred; a run started from the site page
// updates the runs table when it ends, without a reload. With CONSOLE_SCREENSHOTS=1 the pages are
// saved under docs/screenshots/ for the README.

const t = useTestApp(HIGH_LIMITS)
let base = ''
let browser: Browser
let f: ImportFixture
let held: HeldSite
let google = ''

/** Google-ready products; P0000 with a price Google refuses, P0001 with availability in another spelling. */
function products(): Record<string, string>[] {
  return productIds(200).map((id, i) =>
    goodProduct(id, { price: i === 0 ? 'ten' : '19.90 EUR', ...(i === 1 ? { availability: 'In Stock' } : {}), title: `Cotton shirt ${id}` }),
  )
}

beforeAll(async () => {
  base = `http://127.0.0.1:${await listenOnFreePort(t.app)}`
  f = await importFixture(t, { title: 'Shirt shop' })
  // heldSite deletes the first 150 rows it is given: the two with findings come last, and stay.
  const rows = products()
  held = await heldSite(f, [...rows.slice(2), ...rows.slice(0, 2)], async () => {
    google = (await createChannel(f, { name: 'Google DE', export_name: 'google_shopping', format: 'xml', currency: 'EUR' })).id
  })
  expect((await readChannel(f, google)).export_status).toBe('held')
  browser = await launchBrowser()
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await t.app.close()
})

const signedIn = () => signedInPage(browser, base, f.account.xAuthToken)

/** The status cell of the newest run in the runs table. */
const RUN_STATUS_CELL = 'section[aria-labelledby=runs-heading] tbody tr:first-child td:nth-child(3)'

const banner = (page: Page, channelId: string) => page.locator(`[data-held-channel="${channelId}"]`)

describe('held channels in a browser', () => {
  it('shows a banner per held channel on the overview, and Release publishes the held export', async () => {
    const page = await signedIn()
    const csv = banner(page, held.channel.id)
    expect(await csv.innerText()).toContain('50 products now vs 200 delivered: a drop of 75 % (stop at 50 %)')
    expect(await banner(page, google).innerText()).toContain('49 products now vs 199 delivered')
    expect(await page.locator(`#channel-state-${held.channel.id}`).innerText()).toContain('held')
    await screenshot(page, 'overview-held')

    await csv.getByRole('button', { name: 'Release the held export of CSV all' }).click()
    await page.waitForURL(`${base}/console?released=${held.channel.id}`)
    expect(await page.getByRole('status').innerText()).toContain('The held export of CSV all')
    expect(await banner(page, held.channel.id).count()).toBe(0)
    expect(await banner(page, google).count()).toBe(1)
    expect(await page.locator(`#channel-state-${held.channel.id}`).innerText()).toContain('published')
    expect(await servedRows(t, f, held.channel.id)).toBe(50)
    await page.close()
  })

  it('shows the held run as success with warnings, and the banner of the channel still held on the site page', async () => {
    const page = await signedIn()
    await page.getByRole('link', { name: 'Shirt shop' }).click()
    const newest = page.locator('section[aria-labelledby=runs-heading] tbody tr').first()
    expect(await newest.innerText()).toContain(held.held.pid.slice(0, 8))
    expect(await newest.locator('.badge-success_with_warnings').innerText()).toBe('success with warnings')
    expect(await banner(page, google).innerText()).toContain('Google DE')
    await page.close()
  })

  it('lists only the codes that occurred in the diagnostics code filter, with their counts', async () => {
    const page = await signedIn()
    await banner(page, google).getByRole('link', { name: 'Diagnostics of Google DE' }).click()
    await page.getByRole('heading', { name: 'Diagnostics of Google DE' }).waitFor()
    expect(await banner(page, google).getByRole('button', { name: 'Release the held export of Google DE' }).isVisible()).toBe(true)
    const options = await page.getByLabel('Code', { exact: true }).locator('option').allInnerTexts()
    expect(options[0]).toBe('any')
    expect(options.slice(1).sort()).toEqual(['availability_normalised (1)', 'price_invalid_price (1)'])
    await page.getByLabel('Code', { exact: true }).selectOption('availability_normalised')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/code=availability_normalised/)
    const rows = await page.locator('section[aria-labelledby=list-heading] tbody tr').allInnerTexts()
    expect(rows).toHaveLength(1)
    expect(rows[0]).toContain('In Stock')
    await screenshot(page, 'diagnostics-held')
    await page.close()
  })

  it("opens a product's page from the diagnostics and from the product browser: its rows and its checks per channel", async () => {
    const page = await signedIn()
    await page.goto(`${base}/console/sites/${f.site.id}/channels/${google}/diagnostics?code=price_invalid_price`)
    await page.getByRole('link', { name: 'P0000', exact: true }).click()
    await page.getByRole('heading', { name: 'Product P0000' }).waitFor()
    expect(await page.locator('section[aria-labelledby=import-heading]').innerText()).toMatch(/price\s+ten/)
    const inGoogle = page.locator(`article[data-channel="${google}"]`)
    expect(await inGoogle.innerText()).toContain('left out')
    expect(await inGoogle.innerText()).toMatch(/price_invalid_price\s+error/)
    expect(await page.locator(`article[data-channel="${held.channel.id}"]`).innerText()).toContain('in the feed')

    await page.goto(`${base}/console/sites/${f.site.id}/products?fields=id,availability`)
    await page.getByRole('link', { name: 'P0001', exact: true }).click()
    await page.getByRole('heading', { name: 'Product P0001' }).waitFor()
    const rewritten = await page.locator(`article[data-channel="${google}"]`).innerText()
    expect(rewritten).toContain('in the feed')
    expect(rewritten).toMatch(/availability_normalised\s+info/)
    expect(rewritten).toContain('In Stock')
    expect(rewritten).toContain('<g:availability>in_stock</g:availability>')
    await screenshot(page, 'product')
    await page.close()
  })

  it('updates the runs table and the charts when a run started from the site page ends, without a reload', async () => {
    const page = await signedIn()
    await page.goto(`${base}/console/sites/${f.site.id}`)
    // A product more for the run to import, which waits for the import stage's row until the page shows it under way.
    expect((await f.upload(held.stream, [goodProduct('P9999', { price: '19.90 EUR' })])).statusCode).toBe(202)
    const release = await holdImportStage(f.site.id)
    try {
      await startAndWatch(page, release)
    } finally {
      release()
    }
    await page.close()
  })
})

/** Starts a run from the site page while `release` holds its import, then lets it end and watches the page update. */
async function startAndWatch(page: Page, release: () => void): Promise<void> {
  await page.getByLabel('Start a run').selectOption('all')
  await page.getByRole('button', { name: 'Start' }).click()
  await page.locator('[data-poll]').waitFor()
  // A mark on this document: a reload would lose it. (Strings: these run in the page, whose types the tests do not load.)
  await page.evaluate('window.sameDocument = true')
  const statusCell = page.locator(RUN_STATUS_CELL)
  expect(['queued', 'running']).toContain(await statusCell.innerText())
  const url = page.url()
  const chartsBefore = await page.locator('section[aria-labelledby=charts-heading] figcaption').allInnerTexts()
  release()
  await page.locator('[data-refreshed]').waitFor({ timeout: 60_000 })
  await page.waitForFunction(`!['queued', 'running'].includes(document.querySelector('${RUN_STATUS_CELL}')?.textContent.trim())`)
  // Google DE is held again (50 products of 51 against the 199 it delivered): the run has warnings.
  expect(await statusCell.innerText()).toBe('success with warnings')
  expect(await page.locator('[data-field=status]').innerText()).toBe('success with warnings')
  expect(await page.evaluate('window.sameDocument')).toBe(true)
  expect(page.url()).toBe(url)
  const chartsAfter = await page.locator('section[aria-labelledby=charts-heading] figcaption').allInnerTexts()
  expect(chartsAfter).not.toEqual(chartsBefore)
  // The new charts are drawn on the new canvases (Chart.js holds one chart per canvas).
  const drawn = "Array.from(document.querySelectorAll('section[aria-labelledby=charts-heading] canvas')).map((c) => Chart.getChart(c) !== undefined)"
  expect(await page.evaluate(drawn)).toEqual([true, true])
}

/** Locks the site's import stage row until the returned function is called: a run's import waits for it. */
async function holdImportStage(siteId: string): Promise<() => void> {
  let release = () => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  let locked = () => {}
  const isLocked = new Promise<void>((resolve) => (locked = resolve))
  void inTransaction(t.db, async (tx) => {
    await tx.db.selectFrom('site_stage').select('site_id').where('site_id', '=', siteId).where('stage', '=', 'import').forUpdate().execute()
    locked()
    await released
  })
  await isLocked
  return release
}
