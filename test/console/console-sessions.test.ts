import { describe, expect, it } from 'vitest'
import { runCleanup } from '../../src/jobs/cleanup.js'
import { listTokens, revokeToken, rotateCredential } from '../../src/accounts/accounts.js'
import { factories } from '../helpers/factories.js'
import { useTestApp, type TestAccount } from '../helpers/test-app.js'
import { consoleUser, signIn, signInForm } from './console-session.js'

// Sessions and CSRF of the console through HTTP (issue 22): sign-in with either credential, the
// cookie's attributes, CSRF on every write, sign-out, expiry, failed sign-ins counted.

const OPERATOR = 'operator-token-for-the-console-tests'
const t = useTestApp({ CONSOLE_OPERATOR_TOKEN: OPERATOR, AUTH_FAILURES_PER_MINUTE: '5' })
const given = factories(t)

describe('console sign-in', () => {
  it('accepts the X-Auth-Token value and a personal access token, with an HttpOnly, SameSite=Strict signed cookie', async () => {
    const account = await t.account()
    for (const credential of [account.xAuthToken, account.token]) {
      const response = await signIn(t.app, credential)
      expect(response.statusCode, response.body).toBe(303)
      expect(response.headers.location).toBe('/console')
      const setCookie = String(response.headers['set-cookie'])
      expect(setCookie).toMatch(/cp_console=[^;]+\.[^;]+;/)
      expect(setCookie).toMatch(/HttpOnly/)
      expect(setCookie).toMatch(/SameSite=Strict/)
    }
  })

  it('refuses a wrong credential with the form again, and counts it as a failed authentication', async () => {
    for (let i = 0; i < 5; i++) {
      const refused = await signIn(t.app, `cp_wrong${i}:secret`, '198.51.100.7')
      expect(refused.statusCode).toBe(401)
      expect(refused.body).toContain('That credential is not valid')
    }
    const throttled = await signIn(t.app, 'cp_wrong:secret', '198.51.100.7')
    expect(throttled.statusCode).toBe(429)
  })

  it('refuses a sign-in posted without the form of this console', async () => {
    const account = await t.account()
    const response = await t.app.inject({
      method: 'POST',
      url: '/console/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ credential: account.xAuthToken }).toString(),
    })
    expect(response.statusCode).toBe(403)
    expect(response.headers['set-cookie'] ?? '').not.toMatch(/cp_console=/)
  })

  it('sends a page without a session to the sign-in, and a forged cookie too', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/console' })
    expect(page.statusCode).toBe(303)
    expect(page.headers.location).toBe('/console/sign-in?next=%2Fconsole')
    const forged = await t.app.inject({ method: 'GET', url: '/console', headers: { cookie: 'cp_console=abc.def' } })
    expect(forged.statusCode).toBe(303)
  })
})

async function siteStatus(account: TestAccount, siteId: string): Promise<string | undefined> {
  const response = await t.request({ method: 'GET', url: `/platform/v2/sites/${siteId}`, headers: account.platform })
  return response.json<{ Sites: { status: string }[] }>().Sites[0]?.status
}

describe('console writes', () => {
  it('need the session CSRF token: without it 403 and nothing changes, with it the site pauses', async () => {
    const account = await t.account()
    const site = await given.site({ account })
    const user = await consoleUser(t.app, account.xAuthToken)
    const refused = await user.post(`/console/sites/${site.id}/status`, { status: 'paused_upload' })
    expect(refused.status).toBe(403)
    expect(await siteStatus(account, site.id)).toBe('active')
    const csrf = await user.csrf(`/console/sites/${site.id}`)
    const paused = await user.post(`/console/sites/${site.id}/status`, { status: 'paused_upload', _csrf: csrf })
    expect(paused.status).toBe(303)
    expect(await siteStatus(account, site.id)).toBe('paused_upload')
  })

  it('sign-out ends the session: the cookie opens nothing afterwards', async () => {
    const account = await t.account()
    const user = await consoleUser(t.app, account.token)
    expect((await user.get('/console')).status).toBe(200)
    const out = await user.post('/console/sign-out', { _csrf: await user.csrf() })
    expect(out.status).toBe(303)
    expect((await user.get('/console')).status).toBe(303)
  })

  it('a session ends when it expires', async () => {
    const account = await t.account()
    const user = await consoleUser(t.app, account.xAuthToken)
    expect((await user.get('/console')).status).toBe(200)
    t.clock.advance(13 * 3600_000)
    expect((await user.get('/console')).status).toBe(303)
    // The hourly cleanup removes it.
    const report = await runCleanup(t.db, { now: t.clock.now() })
    expect(report.consoleSessions).toBeGreaterThanOrEqual(1)
  })
})

describe('console sessions and their credentials', () => {
  it('end when the credential that opened them is revoked or rotated', async () => {
    const account = await t.account()
    const byToken = await consoleUser(t.app, account.token)
    const byCredential = await consoleUser(t.app, account.xAuthToken)
    const tokens = await listTokens(t.db, account.accountId)
    await revokeToken(t.db, tokens[0]!.id)
    expect((await byToken.get('/console')).status).toBe(303)
    expect((await byCredential.get('/console')).status).toBe(200)
    await rotateCredential(t.db, account.accountId)
    expect((await byCredential.get('/console')).status).toBe(303)
  })

  it('a token session may start runs but not change the site, as the API lets a bearer token', async () => {
    const account = await t.account()
    const site = await given.site({ account })
    const user = await consoleUser(t.app, account.token)
    const csrf = await user.csrf(`/console/sites/${site.id}`)
    const paused = await user.post(`/console/sites/${site.id}/status`, { status: 'paused_upload', _csrf: csrf })
    expect(paused.status).toBe(403)
    expect(paused.body).toContain('platform credential')
    expect(await siteStatus(account, site.id)).toBe('active')
  })

  it('answers odd sign-in input with the form or a redirect, never a 500', async () => {
    const account = await t.account()
    const form = await signInForm(t.app)
    const post = (payload: string) =>
      t.app.inject({ method: 'POST', url: '/console/sign-in', headers: { cookie: form.cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload })
    const cases = [
      `credential=a%00b%3Ax&_sign_in=${form.token}`,
      `credential=x&credential=y&_sign_in=${form.token}`,
      `credential=${encodeURIComponent(account.xAuthToken)}&next=%2Fconsole%2F%00&_sign_in=${form.token}`,
      `credential=${encodeURIComponent(account.xAuthToken)}&next=%2Fconsole%0D%0ASet-Cookie%3A+x&_sign_in=${form.token}`,
      `credential=${encodeURIComponent(account.xAuthToken)}&next=https%3A%2F%2Fevil.example&_sign_in=${form.token}`,
    ]
    for (const payload of cases) {
      const response = await post(payload)
      expect(response.statusCode, payload).toBeLessThan(500)
      if (response.statusCode === 303) expect(response.headers.location).toBe('/console')
    }
    const repeated = await t.app.inject({ method: 'GET', url: '/console/sign-in?next=/console/a&next=x' })
    expect(repeated.statusCode).toBe(200)
  })
})

describe('console scoping', () => {
  it("answers another account's site and stream with a 404 page", async () => {
    const mine = await t.account()
    const other = await t.account()
    const site = await given.site({ account: other })
    const stream = await given.stream({ account: other })
    const user = await consoleUser(t.app, mine.xAuthToken)
    for (const url of [`/console/sites/${site.id}`, `/console/sites/${site.id}/products`, `/console/streams/${stream.id}`]) {
      const page = await user.get(url)
      expect(page.status, url).toBe(404)
      expect(page.body).not.toContain(site.title)
    }
    const start = await user.post(`/console/sites/${site.id}/runs`, { action: 'import', _csrf: await user.csrf() })
    expect(start.status).toBe(404)
  })

  it('serves pages with a Content-Security-Policy that allows no inline script and nothing from elsewhere', async () => {
    const page = await signInForm(t.app)
    expect(page.token).not.toBe('')
    const response = await t.app.inject({ method: 'GET', url: '/console/sign-in' })
    expect(response.headers['content-security-policy']).toMatch(/script-src 'self';/)
    expect(response.body).not.toMatch(/<script>|<script [^>]*src="http/)
  })

  it('keeps no page in the browser cache (Back after signing out shows nothing), and its assets an hour', async () => {
    const account = await t.account()
    const site = await given.site({ account })
    const user = await consoleUser(t.app, account.xAuthToken)
    const page = await t.app.inject({ method: 'GET', url: `/console/sites/${site.id}`, headers: { cookie: user.cookie } })
    expect(page.statusCode).toBe(200)
    expect(page.headers['cache-control']).toBe('no-store')
    const signIn = await t.app.inject({ method: 'GET', url: '/console/sign-in' })
    expect(signIn.headers['cache-control']).toBe('no-store')
    const script = /<script[^>]* src="([^"]+)"/.exec(page.body)?.[1] ?? ''
    expect(script).not.toBe('')
    expect((await t.app.inject({ method: 'GET', url: script })).headers['cache-control']).toBe('public, max-age=3600')
  })
})
