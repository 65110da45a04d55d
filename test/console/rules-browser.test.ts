import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { listenOnFreePort } from '../helpers/listen.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { addRule, importedSite, listRules, plainChannel } from '../rules/rule-fixture.js'
import { launchBrowser, screenshot, signedInPage } from './browser.js'

// Transformation rules in the console, in a real headless Chromium (issue 32): a person builds a
// channel rule in the editor without writing JSON (a map of the shop's availability words to the
// feed's), previews it and sees the after values, saves it, starts a run from the site page and
// downloads the feed the page links to, changed; then moves a rule with the keyboard. With
// CONSOLE_SCREENSHOTS=1 the editor with its preview is saved as docs/screenshots/rules.png.

const t = useTestApp(HIGH_LIMITS)
let base = ''
let browser: Browser
let f: ImportFixture
let channelId = ''

beforeAll(async () => {
  base = `http://127.0.0.1:${await listenOnFreePort(t.app)}`
  f = await importFixture(t, { title: 'Rule shop' })
  await importedSite(f, [
    { id: 'A1', title: 'Shirt', brand: 'Acme', availability: 'yes', price: '10.00' },
    { id: 'A2', title: 'Socks', brand: 'Bolt', availability: 'no', price: '4.00' },
    { id: 'A3', title: 'Scarf', brand: 'Acme', availability: 'Yes', price: '19.00' },
  ])
  channelId = await plainChannel(f, 'csv', { name: 'CSV feed' })
  const run = await f.run('export-all')
  expect(run.status, run.message).toBe('success')
  browser = await launchBrowser()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await t.app.close()
})

describe('transformation rules in a browser', () => {
  it('builds a channel rule, previews it, saves it, runs an export from the site page and downloads the changed feed', async () => {
    const page = await signedInPage(browser, base, f.account.xAuthToken)
    await page.getByRole('link', { name: 'Rule shop' }).click()
    await page.getByRole('link', { name: 'Rules of CSV feed' }).click()
    await page.getByRole('heading', { name: 'Rules of CSV feed' }).waitFor()
    await page.getByRole('link', { name: 'Add a rule' }).click()

    await page.getByLabel('Attribute it writes').fill('availability')
    await page.getByLabel('Description').fill('The feed spells availability its own way')
    // Choosing the action shows its fields (console.js), without a round trip.
    const entries = page.getByLabel('Entries')
    expect(await entries.isVisible()).toBe(false)
    await page.getByLabel('Action', { exact: true }).selectOption('map')
    expect(await entries.isVisible()).toBe(true)
    expect(await page.locator('#then0-value').isVisible()).toBe(false)
    await entries.fill('yes => in_stock\nno => out_of_stock')

    await page.getByRole('button', { name: 'Preview', exact: true }).click()
    await page.locator('[data-preview]').waitFor()
    const sample = page.locator('#preview tr[data-product]')
    expect(await sample.allInnerTexts()).toEqual([
      expect.stringMatching(/^A1\s+yes\s+in_stock/),
      expect.stringMatching(/^A2\s+no\s+out_of_stock/),
      expect.stringMatching(/^A3\s+Yes\s+in_stock/),
    ])
    expect(await page.locator('#preview').innerText()).toContain('the rules change 3 and leave out 0')
    // The form is as it was typed, and nothing is saved yet.
    expect(await entries.inputValue()).toBe('yes => in_stock\nno => out_of_stock')
    expect(await listRules(f, channelId)).toEqual([])
    await screenshot(page, 'rules')

    await page.getByRole('button', { name: 'Save the rule' }).click()
    await page.waitForURL(/done=saved/)
    expect(await page.getByRole('status').innerText()).toContain('Rule 1 was saved')
    expect(await page.locator('li[data-rule]').innerText()).toContain('Map availability through 2 values')

    await page.getByRole('link', { name: 'Rule shop' }).click()
    await page.getByLabel('Start a run').selectOption('export-all')
    await page.getByRole('button', { name: 'Start' }).click()
    await page.locator('[data-refreshed]').waitFor({ timeout: 60_000 })
    expect(await page.locator('[data-field=status]').innerText()).toBe('success')
    const file = page.locator(`article[aria-labelledby="channel-${channelId}"] ul a`).first()
    const feed = await page.request.get(`${base}${await file.getAttribute('href')}`)
    expect(feed.status()).toBe(200)
    const lines = (await feed.text()).trim().split('\n')
    expect(lines.slice(1).map((line) => line.split(',').find((cell) => /stock/.test(cell)))).toEqual(['in_stock', 'out_of_stock', 'in_stock'])
    await page.close()
  }, 120_000)

  it('moves a focused rule with Alt+ArrowDown, the focus staying on it', async () => {
    const second = await addRule(f, { attribute: 'title', then: [{ action: 'case', to: 'upper' }] }, channelId)
    const [first] = await listRules(f, channelId)
    const page = await signedInPage(browser, base, f.account.xAuthToken)
    await page.goto(`${base}/console/sites/${f.site.id}/channels/${channelId}/rules`)
    await page.locator(`#rule-${first!.id}`).focus()
    await page.keyboard.press('Alt+ArrowDown')
    await page.waitForURL(/done=moved/)
    expect((await listRules(f, channelId)).map((rule) => rule.id)).toEqual([second.id, first!.id])
    await page.waitForFunction('document.activeElement?.getAttribute("aria-label") === "Move rule 2 up"')
    // The button itself, by keyboard: Enter on the focused Move up.
    await page.keyboard.press('Enter')
    await page.waitForURL(new RegExp(`rule=${first!.id}&direction=up`))
    expect((await listRules(f, channelId)).map((rule) => rule.id)).toEqual([first!.id, second.id])
    await page.close()
  })
})
