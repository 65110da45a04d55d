import { chromium, type Browser } from 'playwright-core'

// A real headless Chromium: Debian's `chromium` package (installed by .ci/run), driven by
// playwright-core, which runs an installed browser and downloads none.

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

export function launchBrowser(): Promise<Browser> {
  // As root (CI, containers) Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] })
}
