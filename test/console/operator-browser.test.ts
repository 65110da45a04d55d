import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client } from '../helpers/clients.js'
import { factories } from '../helpers/factories.js'
import { listenOnFreePort } from '../helpers/listen.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { launchBrowser } from './browser.js'

// The operator's view in a real Chromium (issue 36): its sign-in asks for the operator token, its
// accounts are links, a Lock or a Disable asks first and does nothing when declined, and the
// console has an icon.
const OPERATOR_TOKEN = 'operator-token-for-the-operator-browser-tests'
const t = useTestApp({ ...HIGH_LIMITS, CONSOLE_OPERATOR_TOKEN: OPERATOR_TOKEN })

let base = ''
let browser: Browser
let streamId = ''
let accountId = ''

beforeAll(async () => {
  base = `http://127.0.0.1:${await listenOnFreePort(t.app)}`
  const c = await client(t)
  accountId = c.account.accountId
  streamId = (await factories(t).stream({ account: c.account, name: 'Operator browser stream' })).id
  browser = await launchBrowser()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await t.app.close()
})

async function operatorPage(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  await page.goto(`${base}/console/operator`)
  await page.getByLabel('Operator token').fill(OPERATOR_TOKEN)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${base}/console/operator`)
  return page
}

async function streamStatus(): Promise<string> {
  const row = await t.db.selectFrom('stream').select('status').where('id', '=', streamId).executeTakeFirstOrThrow()
  return row.status
}

describe('the operator view in a browser', () => {
  it('asks for the operator token, not an account credential, when the operator page is asked for', async () => {
    const page = await browser.newPage()
    await page.goto(`${base}/console/operator`)
    await expect(page.getByText('sign in with the operator token').isVisible()).resolves.toBe(true)
    await expect(page.getByLabel('Operator token').isVisible()).resolves.toBe(true)
  })

  it('links each account to its activity', async () => {
    const page = await operatorPage()
    const row = page.locator(`#stream-${streamId}`)
    await expect(row.getByRole('link', { name: 'Operator browser stream' }).count()).resolves.toBe(0)
    const href = await row.locator('a').first().getAttribute('href')
    expect(href).toBe(`/console/operator/activity?account=${accountId}`)
  })

  it('asks before a Lock, does nothing when declined, and locks when confirmed', async () => {
    const page = await operatorPage()
    const lock = page.getByRole('button', { name: `Lock stream #${streamId}`, exact: true })
    const posts: string[] = []
    page.on('request', (request) => {
      if (request.method() === 'POST') posts.push(request.url())
    })
    let question = ''
    page.once('dialog', (dialog) => {
      question = dialog.message()
      void dialog.dismiss()
    })
    await lock.click()
    expect(question).toContain(`Lock stream #${streamId} of account #${accountId}?`)
    expect(question).toContain('uploads are refused (423)')
    page.once('dialog', (dialog) => void dialog.accept())
    await Promise.all([page.waitForNavigation(), lock.click()])
    expect(await streamStatus()).toBe('locked')
    // One POST in all: the declined click sent nothing.
    expect(posts).toEqual([`${base}/console/operator/streams/${streamId}/status`])
  })

  it('serves an icon, at /favicon.ico too', async () => {
    for (const url of ['/favicon.ico', '/console/assets/favicon.png']) {
      const response = await fetch(`${base}${url}`)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('image/png')
      expect(Buffer.from(await response.arrayBuffer()).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
    }
  })
})
