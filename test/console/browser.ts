import fs from 'node:fs/promises'
import { chromium, type Browser, type Page } from 'playwright-core'

// A real headless Chromium: Debian's `chromium` package (installed by .ci/run), driven by
// playwright-core, which runs an installed browser and downloads none.

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

export function launchBrowser(): Promise<Browser> {
  // As root (CI, containers) Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] })
}

/** A new page of `browser` signed in to the console at `base` with `credential`, on the overview. */
export async function signedInPage(browser: Browser, base: string, credential: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  await page.goto(`${base}/console`)
  await page.getByLabel('Credential').fill(credential)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${base}/console`)
  return page
}

/** A screenshot of the whole page into docs/screenshots/, when CONSOLE_SCREENSHOTS=1 asks for them (README "Console"). */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.CONSOLE_SCREENSHOTS !== '1') return
  await fs.mkdir('docs/screenshots', { recursive: true })
  await page.screenshot({ path: `docs/screenshots/${name}.png`, fullPage: true })
}
