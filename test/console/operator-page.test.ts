import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { platformClient } from '../helpers/clients.js'
import { factories } from '../helpers/factories.js'
import { useTestApp, type TestAccount } from '../helpers/test-app.js'
import { consoleUser, type ConsoleUser } from './console-session.js'

// The operator's view of the console through HTTP (issue 22): only an operator session opens it; it
// shows every account's objects, the runs under way, the failing and slowest sites of the day and
// every stream's state, and sets a stream's status as `streams set-status` of the CLI does. Runs stay
// queued here (RUN_CONCURRENCY 0): the page shows them as they wait.
const OPERATOR = 'operator-token-for-the-operator-page-tests'
const t = useTestApp({
  CONSOLE_OPERATOR_TOKEN: OPERATOR,
  RUN_CONCURRENCY: '0',
  SCHEDULER_INTERVAL_SECONDS: '0',
  ALLOW_PRIVATE_DESTINATIONS: 'true',
  WEBHOOK_ALLOW_HTTP: 'true',
})
const given = factories(t)

async function operator(): Promise<ConsoleUser> {
  return consoleUser(t.app, OPERATOR)
}

/** The row of a table on the page that names `text`, and its numeric cells. */
function rowOf(page: string, text: string): { row: string; numbers: number[] } {
  const row = [...page.matchAll(/<tr[^>]*>[\s\S]*?<\/tr>/g)].map((m) => m[0]).find((r) => r.includes(text)) ?? ''
  return { row, numbers: [...row.matchAll(/<td class="num">([^<]*)<\/td>/g)].map((m) => Number(m[1])) }
}

async function streamStatus(account: TestAccount, streamId: string): Promise<string> {
  const response = await t.request({ method: 'GET', url: `/streams/${streamId}`, headers: account.bearer })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ data: { attributes: { status: string } } }>().data.attributes.status
}

describe('the operator page', () => {
  it('sends a request without a session to the sign-in, and refuses an account session', async () => {
    const anonymous = await t.app.inject({ method: 'GET', url: '/console/operator' })
    expect(anonymous.statusCode).toBe(303)
    expect(anonymous.headers.location).toBe('/console/sign-in?next=%2Fconsole%2Foperator')
    const account = await given.account()
    const stream = await given.stream({ account })
    const user = await consoleUser(t.app, account.xAuthToken)
    const refused = await user.get('/console/operator')
    expect(refused.status).toBe(403)
    expect(refused.body).toContain('CONSOLE_OPERATOR_TOKEN')
    const write = await user.post(`/console/operator/streams/${stream.id}/status`, { status: 'disabled', _csrf: await user.csrf() })
    expect(write.status).toBe(403)
    const unsigned = await t.app.inject({
      method: 'POST',
      url: `/console/operator/streams/${stream.id}/status`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'status=disabled',
    })
    expect(unsigned.statusCode).toBe(401)
    expect(await streamStatus(account, stream.id)).toBe('active')
  })

  it('shows accounts with their object counts, runs queued and running, and the failing and slowest sites', async () => {
    const account = await given.account('Operator page account')
    const [site, other] = await given.sites(2, { account })
    await given.stream({ account })
    await given.channel({ account, site: site! })
    const webhook = await platformClient(t, account).post('/webhooks', { url: 'http://127.0.0.1:9/hooks' })
    expect(webhook.statusCode, webhook.body).toBe(201)
    const queued = await t.request({ method: 'POST', url: `/platform/v2/process/${site!.id}`, headers: account.platform, payload: { action: 'import' } })
    expect(queued.statusCode, queued.body).toBe(200)
    const queuedPid = queued.json<{ process_id: string }>().process_id
    // A run another process is working on, and one that failed after 95 s, as the run workers leave them.
    const running = randomUUID()
    const failedRun = randomUUID()
    const now = Date.now()
    const run = { account_id: account.accountId, site_id: other!.id, target_id: null, trigger: 'api' as const, admitted_at: null, claimed_at: null }
    await t.db
      .insertInto('run')
      .values([
        { ...run, pid: running, action: 'export-all', status: 'running', heartbeat_at: new Date(), started_at: new Date(now - 5000), finished_at: null },
        {
          ...run,
          pid: failedRun,
          action: 'import',
          status: 'failed',
          message: 'The feed could not be read',
          heartbeat_at: null,
          created_at: new Date(now - 3600_000),
          started_at: new Date(now - 3600_000),
          finished_at: new Date(now - 3600_000 + 95_000),
        },
      ])
      .execute()
    const page = await (await operator()).get('/console/operator')
    expect(page.status).toBe(200)
    const accountRow = rowOf(page.body, `Operator page account</a> <span class="muted">#${account.accountId}</span>`)
    // projects, sites, streams, channels, webhooks
    expect(accountRow.numbers).toEqual([1, 2, 1, 1, 1])
    const queuedRow = rowOf(page.body, queuedPid).row
    expect(queuedRow).toContain('badge-queued')
    expect(queuedRow).toContain(site!.title)
    expect(queuedRow).toContain('waiting')
    const runningRow = rowOf(page.body, running).row
    expect(runningRow).toContain('badge-running')
    expect(runningRow).toContain('export-all')
    expect(page.body.indexOf(running)).toBeLessThan(page.body.indexOf(queuedPid))
    const failing = page.body.slice(page.body.indexOf('id="failing-heading"'), page.body.indexOf('id="slowest-heading"'))
    const failingRow = rowOf(failing, `${other!.title}</a> <span class="muted">#${other!.id}</span>`)
    expect(failingRow.numbers.slice(0, 2)).toEqual([2, 1])
    expect(failingRow.row).toContain('1 min 35 s')
    expect(failingRow.row).toContain('The feed could not be read')
    const slowest = page.body.slice(page.body.indexOf('id="slowest-heading"'), page.body.indexOf('id="streams-heading"'))
    expect(slowest).toContain(`${other!.title}</a> <span class="muted">#${other!.id}</span>`)
    expect(page.body).toContain('id="health-heading"')
    expect(page.body).toContain('database pool')
  })

  it('sets a stream status with its buttons: locked_upload, locked, disabled and active again', async () => {
    const account = await given.account('Stream owner')
    const stream = await given.stream({ account, name: 'operator-switched-stream' })
    const elsewhere = await given.stream({ account: await given.account() })
    const user = await operator()
    const page = await user.get(`/console/operator?account=${account.accountId}`)
    expect(page.status).toBe(200)
    const row = rowOf(page.body, 'operator-switched-stream').row
    expect(row).toContain('badge-active')
    expect(row).toContain(`action="/console/operator/streams/${stream.id}/status"`)
    expect(row).not.toContain('value="active"')
    expect(page.body).not.toContain(`id="stream-${elsewhere.id}"`)
    const csrf = await user.csrf('/console/operator')
    for (const status of ['locked_upload', 'locked', 'disabled', 'active']) {
      const set = await user.post(`/console/operator/streams/${stream.id}/status`, { status, _csrf: csrf, account: account.accountId })
      expect(set.status).toBe(303)
      expect(set.location).toBe(`/console/operator?changed=${stream.id}&account=${account.accountId}#stream-${stream.id}`)
      expect(await streamStatus(account, stream.id)).toBe(status)
      const shown = await user.get(set.location!.replace(/#.*$/, ''))
      expect(shown.body).toContain(`Stream #${stream.id} (operator-switched-stream) is now ${status}.`)
      expect(rowOf(shown.body, 'operator-switched-stream').row).toContain(`badge-${status}`)
    }
  })

  it('refuses a status change without the CSRF token, an unknown status and an unknown stream', async () => {
    const account = await given.account()
    const stream = await given.stream({ account })
    const user = await operator()
    const url = `/console/operator/streams/${stream.id}/status`
    expect((await user.post(url, { status: 'locked' })).status).toBe(403)
    const csrf = await user.csrf('/console/operator')
    const unknown = await user.post(url, { status: 'frozen', _csrf: csrf })
    expect(unknown.status).toBe(422)
    expect(unknown.body).toContain('status: must be one of')
    expect((await user.post('/console/operator/streams/999999999/status', { status: 'locked', _csrf: csrf })).status).toBe(404)
    expect(await streamStatus(account, stream.id)).toBe('active')
  })
})
