import { describe, expect, it } from 'vitest'
import type { TestAccount } from '../helpers/test-app.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { expectError, UNAUTHORIZED } from '../helpers/responses.js'
import type { Response } from '../helpers/clients.js'

// Who may start runs and read what they left (docs/interface.md section 5, section 4 "Platform: processing and
// status", "Platform: errors, history, channels"): the process endpoint takes X-Auth-Token or a bearer
// token, status/errors/import history take X-Auth-Token only; every credential reaches only its own
// account's sites and runs.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

type Credential = 'x-auth-token' | 'bearer'
const CREDENTIALS: Credential[] = ['x-auth-token', 'bearer']

function headersFor(account: TestAccount, credential: Credential | 'none'): Record<string, string> {
  if (credential === 'none') return { accept: 'application/json' }
  return credential === 'x-auth-token' ? account.platform : { ...account.bearer, accept: 'application/json' }
}

function send(method: 'GET' | 'POST', path: string, headers: Record<string, string>, payload?: object): Promise<Response> {
  return t.request({ method, url: `/platform/v2${path}`, headers, ...(payload === undefined ? {} : { payload }) })
}

let sites = 0

/** A site whose `all` run succeeded: it has a run, a site error (2001) and an import history entry. */
async function siteWithRun(existing?: ImportFixture): Promise<{ f: ImportFixture; pid: string; reference: string }> {
  const reference = `erp:runs-${++sites}`
  const f = await importFixture(t, { reference }, existing?.c)
  const stream = await f.createStream()
  await f.attach(stream)
  expect((await f.upload(stream, [{ id: 'A', title: 'Shirt' }])).statusCode).toBe(202)
  const run = await f.run('all')
  expect(run.status, run.message).toBe('success')
  return { f, pid: run.pid, reference }
}

async function runCount(siteId: string): Promise<number> {
  const rows = await t.db.selectFrom('run').select('pid').where('site_id', '=', siteId).execute()
  return rows.length
}

/** What the owner sees of its site: unchanged by whatever another account tried. */
async function ownerView(owner: ImportFixture, pid: string) {
  const status = await owner.platform('GET', `/sites/${owner.site.id}/status/${pid}`)
  const errors = await owner.platform('GET', `/sites/${owner.site.id}/errors?pid=${pid}`)
  const history = await owner.platform('GET', `/sites/${owner.site.id}/importhistory`)
  for (const response of [status, errors, history]) expect(response.statusCode, response.body).toBe(200)
  return { status: status.json(), errors: errors.json(), history: history.json(), runs: await runCount(owner.site.id) }
}

describe('account isolation', () => {
  it.each(CREDENTIALS)("answers 404 with %s to another account's site and run on every run endpoint, and queues nothing", async (credential) => {
    const owner = await siteWithRun()
    const intruder = await siteWithRun()
    const before = await ownerView(owner.f, owner.pid)
    expect(before.runs).toBe(1)
    const headers = headersFor(intruder.f.account, credential)
    const theirs = owner.f.site.id
    const mine = intruder.f.site.id

    // The process endpoint takes both credentials.
    for (const segment of [theirs, owner.reference]) {
      for (const body of [{ action: 'import' }, { action: 'all' }, { action: 'export-all' }, { action: 'channel', id: 5 }]) {
        expectError(await send('POST', `/process/${segment}`, headers, body), 404)
      }
    }
    // The rest take X-Auth-Token only: with a bearer token they answer 401 before looking at the site.
    const readStatus = credential === 'x-auth-token' ? 404 : 401
    for (const method of ['GET', 'POST'] as const) {
      for (const path of [`/sites/${theirs}/status/${owner.pid}`, `/sites/${owner.reference}/status/${owner.pid}`, `/sites/${mine}/status/${owner.pid}`]) {
        expectError(await send(method, path, headers), readStatus)
      }
    }
    for (const path of [
      `/sites/${theirs}/errors`,
      `/sites/${theirs}/errors?pid=${owner.pid}`,
      `/sites/${owner.reference}/errors`,
      `/sites/${theirs}/importhistory`,
      `/sites/${owner.reference}/importhistory`,
    ]) {
      expectError(await send('GET', path, headers), readStatus)
    }

    expect(await ownerView(owner.f, owner.pid)).toEqual(before)
    expect(await runCount(mine)).toBe(1)
  })

  it("answers 404 with the platform error body, whose message does not leak the other account's run", async () => {
    const owner = await siteWithRun()
    const intruder = await siteWithRun()
    const headers = intruder.f.account.platform
    for (const response of [
      await send('POST', `/process/${owner.f.site.id}`, headers, { action: 'import' }),
      await send('GET', `/sites/${owner.f.site.id}/status/${owner.pid}`, headers),
      await send('POST', `/sites/${owner.f.site.id}/status/${owner.pid}`, headers),
      await send('GET', `/sites/${owner.f.site.id}/errors`, headers),
      await send('GET', `/sites/${owner.f.site.id}/importhistory`, headers),
    ]) {
      const message = expectError(response, 404)
      expect(message).not.toContain(owner.f.site.title)
    }
    expect(await runCount(owner.f.site.id)).toBe(1)
  })

  it("lists none of another account's site errors when its pid is asked for on one's own site", async () => {
    const owner = await siteWithRun()
    const intruder = await siteWithRun()
    const response = await send('GET', `/sites/${intruder.f.site.id}/errors?pid=${owner.pid}`, intruder.f.account.platform)
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toEqual({ success: true, Errors: [] })
    // The owner does see them.
    expect((await owner.f.errors(owner.pid)).map((e) => e.error)).toEqual(['2001'])
  })

  it("a second site of the same account does not answer for the first one's run", async () => {
    const first = await siteWithRun()
    const second = await siteWithRun(first.f)
    expectError(await first.f.platform('GET', `/sites/${second.f.site.id}/status/${first.pid}`), 404)
    const errors = await first.f.platform('GET', `/sites/${second.f.site.id}/errors?pid=${first.pid}`)
    expect(errors.json()).toEqual({ success: true, Errors: [] })
    const history = await first.f.platform('GET', `/sites/${second.f.site.id}/importhistory`)
    expect(history.json<{ Importhistory: { pid: string }[] }>().Importhistory.map((entry) => entry.pid)).toEqual([second.pid])
  })
})

describe('credentials per endpoint', () => {
  it.each(CREDENTIALS)('POST /process accepts %s and the run reads back with X-Auth-Token', async (credential) => {
    const { f, reference } = await siteWithRun()
    const response = await send('POST', `/process/${f.site.id}`, headersFor(f.account, credential), { action: 'import' })
    expect(response.statusCode, response.body).toBe(200)
    const body = response.json<{ success: boolean; process_id: string }>()
    expect(body.success).toBe(true)
    const ended = await f.waitFor(body.process_id)
    expect(ended.status, ended.message).toBe('success')
    // By reference too.
    const byReference = await send('POST', `/process/${reference}`, headersFor(f.account, credential), { id: null, action: 'import' })
    expect(byReference.statusCode, byReference.body).toBe(200)
    expect((await f.waitFor(byReference.json<{ process_id: string }>().process_id)).status).toBe('success')
  })

  it('POST /process answers 401 without a credential or with a wrong one, and queues nothing', async () => {
    const { f } = await siteWithRun()
    const other = await t.account('Other')
    const attempts: Record<string, string>[] = [
      { accept: 'application/json' },
      { 'x-auth-token': 'nobody:nothing', accept: 'application/json' },
      { 'x-auth-token': f.account.xAuthToken.split(':')[0] ?? '', accept: 'application/json' },
      { 'x-auth-token': `${f.account.xAuthToken}x`, accept: 'application/json' },
      { authorization: 'Bearer not-a-token', accept: 'application/json' },
      { authorization: f.account.token, accept: 'application/json' },
      { authorization: `Basic ${Buffer.from(f.account.xAuthToken).toString('base64')}`, accept: 'application/json' },
      // A wrong X-Auth-Token is not rescued by a valid bearer token.
      { 'x-auth-token': other.xAuthToken.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')), authorization: `Bearer ${f.account.token}` },
    ]
    for (const headers of attempts) {
      const response = await send('POST', `/process/${f.site.id}`, headers, { action: 'import' })
      expect(response.statusCode, `${JSON.stringify(headers)}: ${response.body}`).toBe(401)
      expect(response.json()).toEqual(UNAUTHORIZED)
    }
    expect(await runCount(f.site.id)).toBe(1)
  })

  it('status (GET and POST), errors and import history accept X-Auth-Token and refuse bearer-only or no credential with 401', async () => {
    const { f, pid } = await siteWithRun()
    const endpoints: ['GET' | 'POST', string][] = [
      ['GET', `/sites/${f.site.id}/status/${pid}`],
      ['POST', `/sites/${f.site.id}/status/${pid}`],
      ['GET', `/sites/${f.site.id}/errors`],
      ['GET', `/sites/${f.site.id}/errors?pid=${pid}&limit=10&offset=0`],
      ['GET', `/sites/${f.site.id}/importhistory`],
    ]
    for (const [method, path] of endpoints) {
      const ok = await send(method, path, f.account.platform)
      expect(ok.statusCode, `${method} ${path}: ${ok.body}`).toBe(200)
      expect(ok.json<{ success: boolean }>().success).toBe(true)
      for (const headers of [
        headersFor(f.account, 'bearer'),
        headersFor(f.account, 'none'),
        { 'x-auth-token': 'nobody:nothing', accept: 'application/json' },
        { 'x-auth-token': '', accept: 'application/json' },
      ]) {
        const refused = await send(method, path, headers)
        expect(refused.statusCode, `${method} ${path} ${JSON.stringify(headers)}: ${refused.body}`).toBe(401)
        expect(refused.json()).toEqual(UNAUTHORIZED)
      }
    }
  })

  it('answers 401 rather than 404 to an unauthenticated request for a site that does not exist', async () => {
    for (const [method, path] of [
      ['POST', '/process/999999999'],
      ['GET', '/sites/999999999/status/00000000-0000-4000-8000-000000000000'],
      ['POST', '/sites/999999999/status/00000000-0000-4000-8000-000000000000'],
      ['GET', '/sites/999999999/errors'],
      ['GET', '/sites/999999999/importhistory'],
    ] as const) {
      const response = await send(method, path, { accept: 'application/json' }, method === 'POST' ? { action: 'import' } : undefined)
      expect(response.statusCode, `${method} ${path}`).toBe(401)
      expect(response.json()).toEqual(UNAUTHORIZED)
    }
  })
})
