import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client } from '../helpers/clients.js'
import { factories, importFixture } from '../helpers/factories.js'
import { listenOnFreePort } from '../helpers/listen.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { launchBrowser, signedInPage } from './browser.js'

// A tenant's text cannot reorder the console's own words (issue 36), in a real Chromium: a stream
// named with an unclosed right-to-left override (U+202E), or in Hebrew, keeps the `#id` beside it
// where it belongs, on the account's overview and on the operator's page among other tenants' rows.
const OPERATOR_TOKEN = 'operator-token-for-bidi-tests-0123456789'
const t = useTestApp({ ...HIGH_LIMITS, CONSOLE_OPERATOR_TOKEN: OPERATOR_TOKEN })

let base = ''
let browser: Browser
let accountToken = ''
const names = ['Spring \u202Esale', 'מבצע קיץ', 'Plain name']

beforeAll(async () => {
  base = `http://127.0.0.1:${await listenOnFreePort(t.app)}`
  const c = await client(t)
  accountToken = c.account.xAuthToken
  const given = factories(t)
  for (const name of names) await given.stream({ account: c.account, name })
  browser = await launchBrowser()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await t.app.close()
})

/**
 * For each cell holding one of the names: whether every piece of its `#id` is laid out right of the
 * name (run in the page, as a string: the tests are compiled without the DOM's types).
 */
async function idsAfterNames(page: Page, selector: string): Promise<Record<string, boolean>> {
  const script = `(() => {
    const names = ${JSON.stringify(names)}
    const result = {}
    for (const cell of document.querySelectorAll(${JSON.stringify(selector)})) {
      const name = names.find((n) => cell.textContent.includes(n))
      const id = [...cell.querySelectorAll('span.muted')].find((span) => span.textContent.trim().startsWith('#'))
      if (!name || !id) continue
      const range = document.createRange()
      range.setStart(cell, 0)
      range.setEndBefore(id)
      const nameRight = Math.max(...[...range.getClientRects()].map((rect) => rect.right))
      result[name] = [...id.getClientRects()].every((rect) => rect.left >= nameRight - 1)
    }
    return result
  })()`
  return page.evaluate(script) as Promise<Record<string, boolean>>
}

describe('tenant text in the console', () => {
  it('keeps the #id after a stream name with a right-to-left override or in Hebrew, on the overview', async () => {
    const page = await signedInPage(browser, base, accountToken)
    await page.goto(`${base}/console`)
    expect(await idsAfterNames(page, 'td')).toEqual({ [names[0]!]: true, [names[1]!]: true, [names[2]!]: true })
  })

  it('keeps them in place among the rows of the operator page', async () => {
    const page = await browser.newPage()
    await page.goto(`${base}/console/sign-in`)
    await page
      .getByLabel(/token|credential/i)
      .first()
      .fill(OPERATOR_TOKEN)
    await page.getByRole('button', { name: /sign in/i }).click()
    await page.goto(`${base}/console/operator`)
    expect(await idsAfterNames(page, 'td')).toMatchObject({ [names[0]!]: true, [names[1]!]: true })
  })

  it("isolates a channel's name in the run's message that quotes it, so the words after it keep their order", async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    expect((await f.upload(stream, [{ id: 'A', title: 'Shirt' }])).statusCode).toBe(202)
    const created = await f.c.post(`/sites/${f.site.id}/channels`, { name: 'Google \u202EDE', export_name: 'generic', format: 'csv' })
    expect(created.statusCode, created.body).toBe(201)
    const run = await f.run('all')
    // The name's own override goes: it could not reorder the words after it even if the isolate were ended early.
    expect(run.message).toContain('through \u2068Google DE\u2069')
  })
})
