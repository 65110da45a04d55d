import type { Browser, Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, createProject, createSite, postStream, streamClientOf, type Client } from '../helpers/clients.js'
import { listenOnFreePort } from '../helpers/listen.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { launchBrowser, screenshot, signedInPage } from './browser.js'
import { consoleUser } from './console-session.js'

// The console's activity pages (issue 33) in a real headless Chromium: changes made through the
// platform interface, the stream interface, the console's own forms and the operator's page, then read
// back as a person reads them: who, what, when, through which request, each field's before and after,
// secrets never shown; filtered and paged on the server; a site's changes only; another account's
// site refused; the operator's view across accounts.
const OPERATOR = 'operator-token-for-the-activity-pages'
const t = useTestApp({
  ...HIGH_LIMITS,
  CONSOLE_OPERATOR_TOKEN: OPERATOR,
  ALLOW_PRIVATE_DESTINATIONS: 'true',
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_CONCURRENCY: '0',
  RUN_CONCURRENCY: '0',
  SCHEDULER_INTERVAL_SECONDS: '0',
})

const TAGS = 55
// A description of 500 characters: the page shows its first 300 and an ellipsis.
const LONG_DESCRIPTION = `start-of-description ${'x'.repeat(450)} -tail-marker-of-description`.slice(0, 500)
const TAIL_MARKER = LONG_DESCRIPTION.slice(-20)

let base = ''
let browser: Browser
let busy: Client
let busySite = ''
let shop: Client
let siteId = ''
let secondSiteId = ''
let secrets: string[] = []
let other: Client
let otherSiteId = ''
let otherStreamId = ''

/** A site created with an Idempotency-Key and renamed with an X-Request-Id, through the platform interface. */
async function renamedSite(c: Client): Promise<string> {
  const project = await createProject(c, 'Activity project')
  const headers = { ...c.account.platform, 'idempotency-key': 'create-site-key-1' }
  const created = await t.request({ method: 'POST', url: '/platform/v2/sites', headers, payload: { title: 'Old title', project_id: project.id } })
  expect(created.statusCode, created.body).toBe(201)
  const id = created.json<{ Sites: { id: string }[] }>().Sites[0]!.id
  const renamed = await t.request({
    method: 'PUT',
    url: `/platform/v2/sites/${id}`,
    headers: { ...c.account.platform, 'x-request-id': 'rename-request-1' },
    payload: { title: 'New title' },
  })
  expect(renamed.statusCode, renamed.body).toBe(200)
  secondSiteId = (await createSite(c, { title: 'Second site', project_id: project.id })).id
  return id
}

/** A webhook with a long description, then its secret rotated: the secrets the page must never show. */
async function rotatedWebhook(c: Client): Promise<string[]> {
  const hook = await c.post('/webhooks', { url: 'http://127.0.0.1:9/hook', description: LONG_DESCRIPTION })
  expect(hook.statusCode, hook.body).toBe(201)
  const webhook = hook.json<{ Webhooks: { id: string; secret: string }[] }>().Webhooks[0]!
  const rotated = await c.post(`/webhooks/${webhook.id}/rotate-secret`)
  expect(rotated.statusCode, rotated.body).toBe(200)
  return [webhook.secret, rotated.json<{ Webhooks: { secret: string }[] }>().Webhooks[0]!.secret]
}

beforeAll(async () => {
  base = `http://127.0.0.1:${await listenOnFreePort(t.app)}`
  // First, so that its many entries are the oldest of the operator's view.
  busy = await client(t, 'Busy account')
  busySite = (await createSite(busy, { title: 'Busy site', project_id: (await createProject(busy)).id })).id
  for (let i = 0; i < TAGS; i++) expect((await busy.post(`/sites/${busySite}/tags`, { key: `key${i}`, value: 'v' })).statusCode).toBe(201)
  shop = await client(t, 'Activity shop')
  siteId = await renamedSite(shop)
  secrets = await rotatedWebhook(shop)
  other = await client(t, 'Other account')
  otherSiteId = (await createSite(other, { title: 'Other account site', project_id: (await createProject(other)).id })).id
  otherStreamId = (await postStream(streamClientOf(t, other.account))).id
  browser = await launchBrowser()
  await pauseInTheConsole()
}, 120_000)

/** A change made in the console: the site page's form pauses the site's exports. */
async function pauseInTheConsole(): Promise<void> {
  const page = await signedInPage(browser, base, shop.account.xAuthToken)
  await page.goto(`${base}/console/sites/${siteId}`)
  await page.getByRole('button', { name: 'Pause exports' }).click()
  await page.waitForURL(`${base}/console/sites/${siteId}`)
  await expect(page.getByRole('button', { name: 'Resume exports' }).isVisible()).resolves.toBe(true)
  await page.close()
}

afterAll(async () => {
  await browser?.close()
  await t.app.close()
})

const entries = (page: Page) => page.locator('tr.activity-entry')
const actionCells = (page: Page) => page.locator('tr.activity-entry [data-field=action]').allInnerTexts()
const entryIds = async (page: Page) => (await entries(page).evaluateAll((rows) => rows.map((row) => row.id.replace('activity-', '')))).map(Number)

/** The entries of the page whose action is `action` and that show `text`. */
function entryOf(page: Page, action: string, text?: string): Locator {
  const withAction = entries(page).filter({ has: page.locator('[data-field=action]', { hasText: new RegExp(`^${action.replace('.', '\\.')}$`) }) })
  return text === undefined ? withAction : withAction.filter({ hasText: text })
}

/** The before and after cells of a field in an entry's changes. */
async function change(entry: Locator, field: string): Promise<string[]> {
  const row = entry.locator('table.changes tbody tr').filter({ has: entry.page().locator('th', { hasText: new RegExp(`^${field}$`) }) })
  return row.locator('td').allInnerTexts()
}

async function operatorPage(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  await page.goto(`${base}/console`)
  await page.getByLabel('Credential').fill(OPERATOR)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${base}/console/operator`)
  return page
}

describe('the activity pages of the console', () => {
  it('answers hostile filter values with the page and a message, never a 500', async () => {
    const user = await consoleUser(t.app, shop.account.xAuthToken)
    const operator = await consoleUser(t.app, OPERATOR)
    const names = ['action', 'actor', 'target_type', 'target_id', 'since', 'until', 'cursor', 'limit', 'account']
    const values = ['a\u0000b', 'console:a\u0000b', '1e20', '99999999999999999999', '-1', 'x'.repeat(900), '%', '<script>', '2026-02-30', '9999-12-31T99:99']
    for (const [who, path] of [
      [user, '/console/activity'],
      [user, `/console/sites/${siteId}/activity`],
      [operator, '/console/operator/activity'],
    ] as const) {
      for (const name of names) {
        for (const value of values) {
          const answer = await who.get(`${path}?${name}=${encodeURIComponent(value)}`)
          expect(answer.status, `${path}?${name}=${JSON.stringify(value)}: ${answer.body.slice(0, 300)}`).toBeLessThan(500)
          if (answer.status === 400) expect(answer.body).toMatch(new RegExp(`role="alert" id="activity-error">${name}: `))
          expect(answer.body).not.toContain('<script>')
        }
      }
    }
  })

  it("shows the account's changes: who, what, when, the request, each field's before and after, and no secret", async () => {
    const page = await signedInPage(browser, base, shop.account.xAuthToken)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Activity', exact: true }).click()
    await page.waitForURL(`${base}/console/activity`)
    await expect(page.getByRole('heading', { name: 'Activity', exact: true }).isVisible()).resolves.toBe(true)

    const ids = await entryIds(page)
    expect(ids).toEqual([...ids].sort((a, b) => b - a))
    const paused = entryOf(page, 'site.updated', 'paused_upload')
    expect(await paused.count()).toBe(1)
    expect(await paused.locator('[data-field=actor-type]').innerText()).toBe('(console)')
    expect(await paused.innerText()).toContain('console, signed in with platform credential')
    expect(await change(paused, 'status')).toEqual(['active', 'paused_upload'])
    expect(ids[0]).toBe(Number((await paused.getAttribute('id'))!.replace('activity-', '')))
    // Every page shows a time alike: in UTC and saying so; the exact instant in `datetime`.
    expect(await paused.locator('time').innerText()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/)
    expect(await paused.locator('time').getAttribute('datetime')).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(await paused.getByRole('link', { name: `site #${siteId}` }).getAttribute('href')).toBe(`/console/sites/${siteId}`)

    const renamed = entryOf(page, 'site.updated', 'rename-request-1')
    expect(await renamed.locator('[data-field=actor-type]').innerText()).toBe('(platform_credential)')
    expect(await renamed.locator('[data-field=request-id]').innerText()).toBe('rename-request-1')
    expect(await change(renamed, 'title')).toEqual(['Old title', 'New title'])
    const created = entryOf(page, 'site.created').filter({ has: page.getByRole('link', { name: `site #${siteId}` }) })
    expect(await created.locator('[data-field=idempotency-key]').innerText()).toBe('create-site-key-1')
    expect(await change(created, 'title')).toEqual(['none', 'Old title'])

    const rotated = entryOf(page, 'webhook.secret_rotated')
    expect(await change(rotated, 'secret')).toEqual(['changed (secret, not shown)'])
    expect(await change(rotated, 'previous_secret')).toEqual(['changed (secret, not shown)'])
    const description = (await change(entryOf(page, 'webhook.created'), 'description'))[1]!
    expect(description.startsWith('start-of-description xxx')).toBe(true)
    expect(description.endsWith('…')).toBe(true)
    expect(Array.from(description)).toHaveLength(301)
    const text = await page.content()
    expect(text).not.toContain(TAIL_MARKER)
    for (const secret of secrets) expect(text).not.toContain(secret)
    // Another account's changes are not the account's.
    expect(text).not.toContain('Other account site')
    await screenshot(page, 'activity')
    await page.close()
  })

  it("narrows the list with the filter form, and names a wrong filter's field on the page", async () => {
    const page = await signedInPage(browser, base, shop.account.token)
    await page.goto(`${base}/console/activity`)
    await page.getByLabel('Action').fill('site.*')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/action=site\.\*/)
    const siteActions = await actionCells(page)
    expect(siteActions.sort()).toEqual(['site.created', 'site.created', 'site.updated', 'site.updated'])
    await expect(page.getByLabel('Action').inputValue()).resolves.toBe('site.*')

    await page.getByLabel('Actor type').selectOption('console')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/actor=console/)
    expect(await actionCells(page)).toEqual(['site.updated'])
    expect(await entries(page).locator('[data-field=actor-type]').allInnerTexts()).toEqual(['(console)'])

    await page.getByRole('link', { name: 'All changes' }).click()
    await page.waitForURL(`${base}/console/activity`)
    await page.getByLabel('Target type').fill('webhook')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/target_type=webhook/)
    expect((await actionCells(page)).sort()).toEqual(['webhook.created', 'webhook.secret_rotated'])

    // Times are UTC, with or without a zone: nothing happened after an hour from now.
    const later = new Date(Date.now() + 3600_000).toISOString().slice(0, 16)
    await page.getByLabel('Since (UTC)').fill(later)
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/since=/)
    expect(await page.locator('main').innerText()).toContain('No change matches these filters.')

    await page.getByLabel('Since (UTC)').fill('yesterday')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/since=yesterday/)
    const alert = await page.getByRole('alert').innerText()
    expect(alert).toContain('since: "yesterday" is not an ISO 8601 date or time')
    await expect(page.getByLabel('Since (UTC)').getAttribute('aria-invalid')).resolves.toBe('true')
    expect(await entries(page).count()).toBe(0)
    const wrongAction = await page.goto(`${base}/console/activity?action=${encodeURIComponent('Site updated')}`)
    expect(wrongAction?.status()).toBe(400)
    expect(await page.getByRole('alert').innerText()).toMatch(/^action: /)
    const wrongActor = await page.goto(`${base}/console/activity?actor=robot`)
    expect(wrongActor?.status()).toBe(400)
    expect(await page.getByRole('alert').innerText()).toContain('actor: "robot" is not an actor type')
    await page.close()
  })

  it('pages 50 entries at a time, newest first, and "Older entries" goes on below with the same filters', async () => {
    const total = Number(
      (
        await t.db
          .selectFrom('activity')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('account_id', '=', busy.account.accountId)
          .executeTakeFirstOrThrow()
      ).n,
    )
    expect(total).toBeGreaterThan(TAGS)
    const page = await signedInPage(browser, base, busy.account.xAuthToken)
    await page.goto(`${base}/console/activity`)
    const first = await entryIds(page)
    expect(first).toHaveLength(50)
    await page.getByRole('link', { name: 'Older entries' }).click()
    await page.waitForURL(/cursor=/)
    const second = await entryIds(page)
    expect(second).toHaveLength(total - 50)
    expect(Math.max(...second)).toBeLessThan(Math.min(...first))
    await expect(page.getByRole('link', { name: 'Older entries' }).count()).resolves.toBe(0)
    await page.getByRole('link', { name: 'Newest entries' }).click()
    expect(await entryIds(page)).toEqual(first)

    await page.goto(`${base}/console/activity?action=${encodeURIComponent('tag.*')}&limit=2`)
    const small = await entryIds(page)
    expect(small).toHaveLength(2)
    const older = page.getByRole('link', { name: 'Older entries' })
    const href = new URL((await older.getAttribute('href'))!, base)
    expect(Object.fromEntries(href.searchParams)).toMatchObject({ action: 'tag.*', limit: '2' })
    await older.click()
    await page.waitForURL(/cursor=/)
    const next = await entryIds(page)
    expect(next).toHaveLength(2)
    expect(Math.max(...next)).toBeLessThan(Math.min(...small))
    expect(await actionCells(page)).toEqual(['tag.created', 'tag.created'])
    await expect(page.getByLabel('Action').inputValue()).resolves.toBe('tag.*')
    await page.close()
  })

  it("shows a site's own changes from its page, and refuses another account's site", async () => {
    const page = await signedInPage(browser, base, shop.account.xAuthToken)
    await page.goto(`${base}/console/sites/${siteId}`)
    await page.getByRole('link', { name: 'Activity of the site' }).click()
    await page.waitForURL(`${base}/console/sites/${siteId}/activity`)
    await expect(page.getByRole('heading', { name: 'Activity of New title' }).isVisible()).resolves.toBe(true)
    expect((await actionCells(page)).sort()).toEqual(['site.created', 'site.updated', 'site.updated'])
    expect(await page.locator('main').innerText()).not.toContain(`site #${secondSiteId}`)
    expect(await page.locator('main').innerText()).not.toContain('webhook')

    await page.getByLabel('Actor type').selectOption('platform_credential')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/actor=platform_credential/)
    expect(page.url()).toContain(`/console/sites/${siteId}/activity?`)
    expect((await actionCells(page)).sort()).toEqual(['site.created', 'site.updated'])

    const refused = await page.goto(`${base}/console/sites/${otherSiteId}/activity`)
    expect(refused?.status()).toBe(404)
    expect(await page.locator('main').innerText()).not.toContain('Other account site')
    const operatorOnly = await page.goto(`${base}/console/operator/activity`)
    expect(operatorOnly?.status()).toBe(403)
    await page.close()
  })

  it("shows the operator every account's changes, its own stream switch as the operator's, and filters by account", async () => {
    const page = await operatorPage()
    // A Lock asks first (operator-browser.test.ts): confirmed here.
    page.once('dialog', (dialog) => void dialog.accept())
    await page.getByRole('button', { name: `Lock stream #${otherStreamId}`, exact: true }).click()
    await page.waitForURL(/changed=/)
    await page.getByRole('link', { name: 'Activity of every account' }).click()
    await page.waitForURL(`${base}/console/operator/activity`)
    const accounts = await page.locator('tr.activity-entry td:first-child').allInnerTexts()
    expect(accounts).toContain(`#${shop.account.accountId}`)
    expect(accounts).toContain(`#${other.account.accountId}`)
    const locked = entryOf(page, 'stream.status_changed')
    expect(await locked.locator('[data-field=actor-type]').innerText()).toBe('(operator)')
    expect(await locked.locator('td').first().innerText()).toBe(`#${other.account.accountId}`)
    expect(await change(locked, 'status')).toEqual(['active', 'locked'])
    // The operator has no account's site pages: targets are named, not linked.
    expect(await page.locator(`a[href^="/console/sites/"]`).count()).toBe(0)

    await page.getByLabel('Account id').fill(other.account.accountId)
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/account=/)
    expect(new Set(await page.locator('tr.activity-entry td:first-child').allInnerTexts())).toEqual(new Set([`#${other.account.accountId}`]))
    expect(await actionCells(page)).toContain('site.created')
    await page.getByLabel('Account id').fill('shop')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/account=shop/)
    expect(await page.getByRole('alert').innerText()).toContain('account: "shop" is not an account id')
    await page.close()
  })
})
