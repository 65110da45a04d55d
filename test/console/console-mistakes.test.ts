import { describe, expect, it } from 'vitest'
import { importFixture } from '../helpers/factories.js'
import { registeredRoutes } from '../helpers/registered-routes.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { consoleUser } from './console-session.js'

// Every console page and form with the values clients get wrong (NUL, numbers beyond 64 bits, texts of
// 10,000 characters) in path segments, query parameters and form fields, signed in: never a 500, and
// every answer an HTML page (or a redirect), never a stack trace.

const t = useTestApp({ ...HIGH_LIMITS, CONSOLE_OPERATOR_TOKEN: 'operator-token-for-the-mistakes-walk' })
const HOSTILE = ['a\u0000b', '1e20', '9223372036854775807', '99999999999999999999', '-1', 'x'.repeat(900), '%', '<script>']
const QUERY_NAMES = ['offset', 'runs_offset', 'pid', 'type', 'classification', 'stage', 'channel', 'fields', 'filter', 'webhook', 'status', 'account']

function consoleRoutes() {
  return registeredRoutes(t.app.printRoutes({ commonPrefix: false })).filter(
    ({ method, path }) => path.startsWith('/console') && !path.startsWith('/console/assets') && method !== 'HEAD',
  )
}

function fill(path: string, value: string, ids: Record<string, string>): string {
  return path.replace(/:(\w+)/g, (_match, name: string) => encodeURIComponent(value === '' ? (ids[name] ?? '1') : value))
}

describe('console pages with hostile values', () => {
  it('answers every page and form below 500, in HTML, for an account and for the operator', async () => {
    const f = await importFixture(t, { title: 'Walked shop' })
    const streamId = await f.createStream()
    await f.attach(streamId)
    const run = await f.run('import')
    const ids: Record<string, string> = { siteId: f.site.id, streamId, pid: run.pid, webhookId: '1', deliveryId: '1' }
    const users = [await consoleUser(t.app, f.account.xAuthToken), await consoleUser(t.app, 'operator-token-for-the-mistakes-walk')]
    const routes = consoleRoutes()
    expect(routes.length).toBeGreaterThan(10)
    for (const user of users) {
      const csrf = await user.csrf(user === users[0] ? '/console' : '/console/operator')
      for (const route of routes) {
        for (const value of ['', ...HOSTILE]) {
          const url = fill(route.path, value, ids)
          const answers =
            route.method === 'GET'
              ? [await user.get(url), ...(await Promise.all(QUERY_NAMES.map((name) => user.get(`${url}?${name}=${encodeURIComponent(value || 'a\u0000b')}`))))]
              : [await user.post(url, { _csrf: csrf, action: value, status: value, credential: value })]
          for (const answer of answers) {
            expect(answer.status, `${route.method} ${url}: ${answer.body.slice(0, 200)}`).toBeLessThan(500)
            expect(answer.body).not.toMatch(/at .*\.[jt]s:\d+|TypeError|ReferenceError/)
          }
        }
      }
    }
  }, 120_000)
})

describe('console query values checked by the route', () => {
  it('answers a query value sent twice with a page that names it, and a single one with the page', async () => {
    const f = await importFixture(t, { title: 'Twice shop' })
    const user = await consoleUser(t.app, f.account.xAuthToken)
    const once = await user.get(`/console/sites/${f.site.id}?runs_offset=0`)
    expect(once.status).toBe(200)
    const twice = await user.get(`/console/sites/${f.site.id}?runs_offset=0&runs_offset=20`)
    expect(twice.status).toBe(400)
    expect(twice.body).toMatch(/^<!doctype html>/i)
    expect(twice.body).toContain('runs_offset')
  })

  it('answers a form field sent twice with a page that names it, and starts no run', async () => {
    const f = await importFixture(t, { title: 'Twice form shop' })
    const user = await consoleUser(t.app, f.account.xAuthToken)
    const csrf = await user.csrf(`/console/sites/${f.site.id}`)
    const twice = await user.post(
      `/console/sites/${f.site.id}/runs`,
      new URLSearchParams([
        ['_csrf', csrf],
        ['action', 'import'],
        ['action', 'all'],
      ]),
    )
    expect(twice.status).toBe(400)
    expect(twice.body).toMatch(/^<!doctype html>/i)
    expect(twice.body).toContain('action')
    expect(await t.db.selectFrom('run').select('pid').where('site_id', '=', f.site.id).execute()).toEqual([])
    const once = await user.post(`/console/sites/${f.site.id}/runs`, { _csrf: csrf, action: 'import' })
    expect(once.status).toBe(303)
  })
})
