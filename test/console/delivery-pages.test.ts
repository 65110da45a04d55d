import { X509Certificate } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import type { Browser, Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { startFtpsServer, type FtpsServer } from '../helpers/ftps-server.js'
import { listenOnFreePort } from '../helpers/listen.js'
import type { ChannelJson } from '../helpers/responses.js'
import { sftpLogin, startSftpServer, type SftpServer } from '../helpers/sftp-server.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { launchBrowser, screenshot, signedInPage } from './browser.js'
import { consoleUser } from './console-session.js'

// A channel's destinations and deliveries page (issue 34) in a real headless Chromium, against real
// file servers (OpenSSH's sshd, vsftpd with explicit TLS) on loopback ports: the site page links it;
// it shows each destination as a person reads it (a file server's address, login, directory, the key
// or certificate it must present, never its credentials) and the delivery attempts of an export; the
// Test button of a file server connects and says OK, or why not (a host key that does not match);
// another account's channel is a 404 page; a personal access token's session cannot test.
const t = useTestApp({
  ...HIGH_LIMITS,
  ALLOW_PRIVATE_DESTINATIONS: 'true',
  RUN_POLL_SECONDS: '0.5',
  SCHEDULER_INTERVAL_SECONDS: '0',
  PUSH_RETRY_BASE_SECONDS: '0.2',
  PUSH_TIMEOUT_SECONDS: '15',
})

const FILENAME = 'deliveries-{site_id}.csv'
const ROWS = [
  { id: 'A', title: 'Shirt', price: '10.00 EUR' },
  { id: 'B', title: 'Shoe, "red"', price: '25.00 EUR' },
]
const WRONG_KEY = `SHA256:${Buffer.alloc(32, 7).toString('base64').replace(/=+$/, '')}`

let base = ''
let browser: Browser
let sftp: SftpServer
let ftps: FtpsServer
let pin = ''
let f: ImportFixture
let channel: ChannelJson
let wrongKeyChannel: ChannelJson
let filename = ''

function sftpDestination(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...sftpLogin(sftp), name: 'Warehouse', directory: 'upload', ...extra }
}

function ftpsDestination(): Record<string, unknown> {
  const { host, port, user, password } = ftps
  return { type: 'ftps', host, port, user, password, tls_certificate_sha256: pin, directory: 'upload' }
}

async function createChannel(name: string, destinations: object[]): Promise<ChannelJson> {
  const response = await f.c.post(`/sites/${f.site.id}/channels`, {
    name,
    export_name: 'generic',
    format: 'csv',
    filenames: [{ type: null, filename: FILENAME }],
    destinations: [{ type: 'feed' }, ...destinations],
  })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ Channels: ChannelJson[] }>().Channels[0]!
}

/** The channel's destination ids by kind (feed, sftp, ftps), from feed_destinations. */
function destinationIds(of: ChannelJson): Record<string, string> {
  const kinds: Record<number, string> = { 1: 'feed', 2: 'http', 3: 'sftp', 4: 'ftps' }
  const entries = Object.entries(of.feed_destinations as Record<string, { destination_id: number }>)
  return Object.fromEntries(entries.map(([id, d]) => [kinds[d.destination_id], id]))
}

const deliveriesUrl = (of: ChannelJson) => `${base}/console/sites/${of.site_id}/channels/${of.id}/deliveries`

beforeAll(async () => {
  ;[sftp, ftps] = await Promise.all([startSftpServer(), startFtpsServer()])
  pin = new X509Certificate(ftps.certificate).fingerprint256
  base = `http://127.0.0.1:${await listenOnFreePort(t.app)}`
  f = await importFixture(t, { title: 'Delivery shop' })
  const stream = await f.createStream()
  await f.attach(stream)
  expect((await f.upload(stream, ROWS)).statusCode).toBe(202)
  channel = await createChannel('Files', [sftpDestination(), ftpsDestination()])
  const run = await f.run('all')
  expect(run.status, run.message).toBe('success')
  filename = `deliveries-${f.site.id}.csv`
  await eventually(async () => {
    const response = await f.c.get(`/sites/${f.site.id}/channels/${channel.id}/deliveries`)
    expect(response.statusCode, response.body).toBe(200)
    const attempts = response.json<{ Attempts: { outcome: string }[] }>().Attempts
    return attempts.filter((attempt) => attempt.outcome === 'delivered').length === 2 || undefined
  }, 'both deliveries')
  // Made after the export: its Test is the only connection it makes.
  wrongKeyChannel = await createChannel('Wrong key', [sftpDestination({ name: 'Impostor', host_key_sha256: WRONG_KEY, directory: 'upload/never' })])
  browser = await launchBrowser()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await t.app.close()
  await Promise.all([sftp?.stop(), ftps?.stop()])
})

/** The destination's article of the page, by its kind. */
const destination = (page: Page, kind: string): Locator => page.locator(`article.destination[data-kind="${kind}"]`)
const field = (scope: Locator, name: string) => scope.locator(`[data-field="${name}"]`).first().innerText()

/** The page's HTML holds neither server's password nor any sealed credential. */
async function expectNoSecrets(page: Page): Promise<void> {
  const content = await page.content()
  expect(content).not.toContain(sftp.password)
  expect(content).not.toContain(ftps.password)
  const sealed = await t.db.selectFrom('channel_destination').select('sealed_credentials').where('sealed_credentials', 'is not', null).execute()
  expect(sealed.length).toBeGreaterThan(0)
  for (const { sealed_credentials } of sealed) expect(content).not.toContain(sealed_credentials!)
}

describe('the destinations and deliveries page of a channel', () => {
  it('is linked from the site page and shows the destinations, credentials never, and the delivered attempts', async () => {
    const page = await signedInPage(browser, base, f.account.xAuthToken)
    await page.goto(`${base}/console/sites/${f.site.id}`)
    await page.getByRole('link', { name: 'Destinations and deliveries of Files' }).click()
    await page.waitForURL(deliveriesUrl(channel))
    await expect(page.getByRole('heading', { level: 1 }).innerText()).resolves.toBe('Destinations and deliveries of Files')

    const feed = destination(page, 'feed')
    await expect(field(feed, 'type')).resolves.toBe('Feed URL')
    await expect(feed.getByRole('button').count()).resolves.toBe(0)

    const server = destination(page, 'sftp')
    await expect(field(server, 'type')).resolves.toBe('SFTP')
    await expect(field(server, 'name')).resolves.toBe('Warehouse')
    await expect(field(server, 'active')).resolves.toBe('yes')
    await expect(field(server, 'server')).resolves.toBe(`127.0.0.1:${sftp.port}`)
    await expect(field(server, 'user')).resolves.toBe(sftp.user)
    await expect(field(server, 'directory')).resolves.toBe('upload')
    await expect(field(server, 'host-key')).resolves.toBe(sftp.hostKeySha256)
    await expect(field(server, 'temp-rename')).resolves.toBe('yes')
    await expect(field(server, 'credentials')).resolves.toBe('stored (never shown)')
    await expect(server.getByRole('button', { name: /^Test SFTP destination #\d+ \(Warehouse\)$/ }).count()).resolves.toBe(1)

    const tls = destination(page, 'ftps')
    await expect(field(tls, 'type')).resolves.toBe('FTPS')
    await expect(field(tls, 'server')).resolves.toBe(`127.0.0.1:${ftps.port}`)
    await expect(field(tls, 'user')).resolves.toBe(ftps.user)
    await expect(field(tls, 'certificate')).resolves.toBe(pin)
    await expect(field(tls, 'temp-rename')).resolves.toBe('yes')
    await expect(field(tls, 'credentials')).resolves.toBe('stored (never shown)')
    await expect(tls.getByRole('button', { name: /^Test FTPS destination #\d+$/ }).count()).resolves.toBe(1)

    // The two deliveries of the export: each server's file, its bytes, where it was written.
    const size = (await fs.stat(path.join(sftp.root, 'upload', filename))).size
    expect((await fs.stat(path.join(ftps.root, 'upload', filename))).size).toBe(size)
    const rows = page.locator('tr.delivery-attempt')
    await expect(rows.count()).resolves.toBe(2)
    for (const row of await rows.all()) {
      await expect(field(row, 'file')).resolves.toBe(filename)
      await expect(field(row, 'attempt')).resolves.toBe('1')
      await expect(field(row, 'outcome')).resolves.toBe('delivered')
      await expect(field(row, 'bytes')).resolves.toBe(String(size))
      await expect(field(row, 'remote-path')).resolves.toBe(`upload/${filename}`)
      await expect(field(row, 'duration')).resolves.toMatch(/^\d+ ms$/)
      await expect(row.locator('time').getAttribute('datetime')).resolves.toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    }
    const targets = (await rows.locator('[data-field="destination"]').allInnerTexts()).sort()
    expect(targets).toEqual([`ftps://${ftps.user}@127.0.0.1:${ftps.port}/upload`, `sftp://${sftp.user}@127.0.0.1:${sftp.port}/upload`])
    // Newest first, as the API lists them.
    const ids = await rows.evaluateAll((list) => list.map((row) => Number(row.id.replace('attempt-', ''))))
    expect(ids).toEqual([...ids].sort((a, b) => b - a))
    await expectNoSecrets(page)
    await screenshot(page, 'console-deliveries')

    // Paged with an offset: past the two attempts, none.
    await page.goto(`${deliveriesUrl(channel)}?offset=50`)
    await expect(page.locator('tr.delivery-attempt').count()).resolves.toBe(0)
    await expect(page.getByText('No older delivery attempts.').isVisible()).resolves.toBe(true)
    await page.close()
  })

  it('tests an SFTP and an FTPS destination: OK, with the test file written and removed', async () => {
    const page = await signedInPage(browser, base, f.account.xAuthToken)
    await page.goto(deliveriesUrl(channel))
    await page.getByRole('button', { name: /^Test SFTP destination/ }).click()
    const result = page.getByRole('status')
    await result.waitFor()
    await expect(result.getAttribute('data-outcome')).resolves.toBe('ok')
    await expect(result.innerText()).resolves.toContain('OK')
    await expect(field(result, 'remote-path')).resolves.toMatch(/^upload\/\.catalog-platform-test-[a-z0-9]+\.txt$/)
    await expect(field(result, 'duration')).resolves.toMatch(/^\d+ ms$/)
    // The page is shown again below the outcome, its attempts with it.
    await expect(page.locator('tr.delivery-attempt').count()).resolves.toBe(2)
    await expectNoSecrets(page)
    expect((await fs.readdir(path.join(sftp.root, 'upload'))).filter((name) => name.includes('catalog-platform-test'))).toEqual([])

    await page.getByRole('button', { name: /^Test FTPS destination/ }).click()
    await page.waitForURL(/\/destinations\/\d+\/test$/)
    await expect(page.getByRole('status').getAttribute('data-outcome')).resolves.toBe('ok')
    await expect(page.getByRole('status').innerText()).resolves.toContain(`FTPS destination #${destinationIds(channel).ftps}`)
    await expectNoSecrets(page)
    expect((await fs.readdir(path.join(ftps.root, 'upload'))).filter((name) => name.includes('catalog-platform-test'))).toEqual([])
    await page.close()
  })

  it("says why a destination's test failed: a host key that does not match", async () => {
    const page = await signedInPage(browser, base, f.account.xAuthToken)
    await page.goto(deliveriesUrl(wrongKeyChannel))
    await expect(field(destination(page, 'sftp'), 'host-key')).resolves.toBe(WRONG_KEY)
    await expect(page.getByText('No delivery attempts yet', { exact: false }).isVisible()).resolves.toBe(true)
    await page.getByRole('button', { name: /^Test SFTP destination #\d+ \(Impostor\)$/ }).click()
    const result = page.getByRole('status')
    await result.waitFor()
    await expect(result.getAttribute('data-outcome')).resolves.toBe('failed')
    await expect(field(result, 'error')).resolves.toContain(`host key is ${sftp.hostKeySha256}, not the ${WRONG_KEY}`)
    await expectNoSecrets(page)
    await expect(fs.readdir(path.join(sftp.root, 'upload', 'never'))).rejects.toThrow()
    await page.close()
  })

  it("refuses another account's channel (404), a feed destination's test (400) and a personal access token's test (403)", async () => {
    const other = await client(t, 'Other account')
    const page = await signedInPage(browser, base, other.account.xAuthToken)
    const answer = await page.goto(deliveriesUrl(channel))
    expect(answer?.status()).toBe(404)
    await expect(page.getByRole('heading', { level: 1 }).innerText()).resolves.toBe('Not found')
    await expect(page.content()).resolves.not.toContain('Warehouse')
    await page.close()

    const ids = destinationIds(channel)
    const testUrl = (id: string) => `/console/sites/${f.site.id}/channels/${channel.id}/destinations/${id}/test`
    const stranger = await consoleUser(t.app, other.account.xAuthToken)
    const refused = await stranger.post(testUrl(ids.sftp!), { _csrf: await stranger.csrf() })
    expect(refused.status).toBe(404)
    expect(refused.body).not.toContain('Warehouse')

    const owner = await consoleUser(t.app, f.account.xAuthToken)
    const feedTest = await owner.post(testUrl(ids.feed!), { _csrf: await owner.csrf() })
    expect(feedTest.status).toBe(400)
    expect(feedTest.body).toContain('only sftp and ftps destinations are tested')
    expect((await owner.post(testUrl('999999'), { _csrf: await owner.csrf() })).status).toBe(404)
    // Without the session's CSRF token, nothing runs.
    expect((await owner.post(testUrl(ids.sftp!), { _csrf: 'forged' })).status).toBe(403)

    // Values clients get wrong, in each segment and the offset: a page below 500, never a stack trace.
    const channelPath = `/console/sites/${f.site.id}/channels/${channel.id}`
    for (const value of ['a\u0000b', '99999999999999999999', '9223372036854775807', '-1', '%', '<script>', 'x'.repeat(900)]) {
      const v = encodeURIComponent(value)
      const answers = [
        await owner.get(`/console/sites/${v}/channels/${channel.id}/deliveries`),
        await owner.get(`/console/sites/${f.site.id}/channels/${v}/deliveries`),
        await owner.get(`${channelPath}/deliveries?offset=${v}`),
        await owner.post(`${channelPath}/destinations/${v}/test`, { _csrf: await owner.csrf() }),
        await owner.post(`/console/sites/${f.site.id}/channels/${v}/destinations/${ids.sftp!}/test`, { _csrf: await owner.csrf() }),
      ]
      for (const answer of answers) {
        expect(answer.status, `${value}: ${answer.body.slice(0, 200)}`).toBeLessThan(500)
        expect(answer.body).not.toMatch(/at .*\.[jt]s:\d+|TypeError|ReferenceError/)
      }
    }

    // A personal access token's session sees the page without Test buttons, and its POST is refused.
    const bearer = await consoleUser(t.app, f.account.token)
    const shown = await bearer.get(deliveriesUrl(channel).slice(base.length))
    expect(shown.status).toBe(200)
    expect(shown.body).toContain('Warehouse')
    expect(shown.body).not.toMatch(/<button[^>]*>Test<\/button>/)
    const tokenRefused = await bearer.post(testUrl(ids.sftp!), { _csrf: await bearer.csrf() })
    expect(tokenRefused.status).toBe(403)
    expect(tokenRefused.body).toContain('platform credential')
  })
})
