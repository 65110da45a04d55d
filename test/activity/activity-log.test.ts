import { describe, expect, it } from 'vitest'
import type { ResolveHost } from '../../src/net/outbound-guard.js'
import { runCleanup } from '../../src/jobs/cleanup.js'
import { client, createSite, JSON_API, NDJSON, ndjson, uniqueName, type Client } from '../helpers/clients.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'

// The activity log through HTTP on a real Postgres: every family of writes leaves an entry with its
// before and after, the credential and the request; no secret is ever in one; pages stay stable while
// entries arrive; filters; another account's entries are never shown; retention.

const resolveHost: ResolveHost = async (hostname) => {
  if (hostname.endsWith('example.com')) return [{ address: '93.184.216.34', family: 4 }]
  throw Object.assign(new Error(`${hostname} not found`), { code: 'ENOTFOUND' })
}
const t = useTestApp({ ...HIGH_LIMITS, WEBHOOK_CONCURRENCY: '0', RUN_CONCURRENCY: '0', SCHEDULER_INTERVAL_SECONDS: '0' }, { resolveHost })

interface Entry {
  id: string
  occurred_at: string
  account_id: string
  actor: { type: string; id: string; label: string }
  action: string
  target: { type: string; id: string; site_id: string | null }
  changes: Record<string, [unknown, unknown] | 'changed'>
  request: { id: string; address: string | null; user_agent: string | null; idempotency_key: string | null } | null
}
interface Page {
  Activity: Entry[]
  next_cursor: string | null
  next: string | null
}

async function activity(c: Client, query = '', path = '/activity'): Promise<Page> {
  const response = await c.get(`${path}${query}`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<Page>()
}

/** Every entry of the account, newest first, walking the pages. */
async function allEntries(c: Client, query = ''): Promise<Entry[]> {
  const entries: Entry[] = []
  let cursor: string | null = null
  do {
    const page: Page = await activity(c, `?limit=100${query}${cursor ? `&cursor=${cursor}` : ''}`)
    entries.push(...page.Activity)
    cursor = page.next_cursor
  } while (cursor)
  return entries
}

function only(entries: Entry[], action: string, targetId?: string): Entry {
  const found = entries.filter((e) => e.action === action && (targetId === undefined || e.target.id === targetId))
  expect(found, `${action} ${targetId ?? ''}: ${JSON.stringify(entries.map((e) => e.action))}`).toHaveLength(1)
  return found[0]!
}

async function streamRequest(c: Client, method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: string, headers: Record<string, string> = {}) {
  return t.request({ method, url, headers: { ...c.account.bearer, 'content-type': JSON_API, ...headers }, ...(payload === undefined ? {} : { payload }) })
}

describe('the activity log', () => {
  it('records each family of writes with its before and after, its actor and its request', async () => {
    const c = await client(t)
    const project = await c.post('/projects', { name: 'Shop' })
    const projectId = project.json<{ Projects: { id: string }[] }>().Projects[0]!.id
    expect((await c.put(`/projects/${projectId}`, { name: 'Shop EU' })).statusCode).toBe(200)
    const site = await createSite(c, { title: 'Old title', project_id: projectId })
    const renamed = await t.request({
      method: 'PUT',
      url: `/platform/v2/sites/${site.id}`,
      headers: { ...c.account.platform, 'user-agent': 'acme-sync/2.1' },
      payload: { title: 'New title' },
    })
    expect(renamed.statusCode).toBe(200)
    const tag = (await c.post(`/sites/${site.id}/tags`, { key: 'region', value: 'eu' })).json<{ Tags: { id: string }[] }>().Tags[0]!
    expect((await c.put(`/sites/${site.id}/tags/${tag.id}`, { value: 'de' })).statusCode).toBe(200)
    expect((await c.del(`/sites/${site.id}/tags/${tag.id}`)).statusCode).toBe(200)

    const created = await streamRequest(c, 'POST', '/streams', JSON.stringify({ data: { type: 'stream', attributes: { name: uniqueName() } } }))
    expect(created.statusCode, created.body).toBe(201)
    const streamId = created.json<{ data: { id: string } }>().data.id
    const newName = uniqueName()
    expect(
      (await streamRequest(c, 'PATCH', `/streams/${streamId}`, JSON.stringify({ data: { type: 'stream', id: streamId, attributes: { name: newName } } })))
        .statusCode,
    ).toBe(200)
    const source = await c.post(`/sites/${site.id}/streams`, { stream_id: streamId, import_type: 1, description: 'feed', status: 'active' })
    expect(source.statusCode, source.body).toBe(201)
    const channel = (await c.post(`/sites/${site.id}/channels`, { name: 'Google', export_name: 'google-shopping' })).json<{ Channels: { id: string }[] }>()
      .Channels[0]!
    expect((await c.put(`/sites/${site.id}/channels/${channel.id}`, { filter: 'price > 0' })).statusCode).toBe(200)
    const rule = (await c.post(`/sites/${site.id}/rules`, { attribute: 'brand', then: [{ action: 'trim' }] })).json<{ Rules: { id: string }[] }>().Rules[0]!
    const second = (await c.post(`/sites/${site.id}/rules`, { attribute: 'title', then: [{ action: 'trim' }] })).json<{ Rules: { id: string }[] }>().Rules[0]!
    expect((await c.put(`/sites/${site.id}/rules/${rule.id}`, { enabled: false })).statusCode).toBe(200)
    expect((await c.put(`/sites/${site.id}/rules/order`, { ids: [second.id, rule.id] })).statusCode).toBe(200)
    expect((await c.del(`/sites/${site.id}/rules/${second.id}`)).statusCode).toBe(200)
    const run = await t.request({ method: 'POST', url: `/platform/v2/process/${site.id}`, headers: c.account.bearer, payload: { action: 'import' } })
    expect(run.statusCode, run.body).toBe(200)
    const deleted = await streamRequest(c, 'DELETE', `/streams/${streamId}/products?all=true`)
    expect(deleted.statusCode, deleted.body).toBe(202)
    const lines = await t.request({
      method: 'DELETE',
      url: `/streams/${streamId}/products`,
      headers: { ...c.account.bearer, ...NDJSON },
      payload: ndjson([{ id: 'a' }, { id: 'b' }]),
    })
    expect(lines.statusCode, lines.body).toBe(202)
    expect((await c.del(`/sites/${site.id}/channels/${channel.id}`)).statusCode).toBe(200)

    const entries = await allEntries(c)
    expect(only(entries, 'project.updated').changes).toEqual({ name: ['Shop', 'Shop EU'] })
    const siteUpdated = only(entries, 'site.updated')
    expect(siteUpdated.changes).toEqual({ title: ['Old title', 'New title'] })
    expect(siteUpdated.target).toEqual({ type: 'site', id: site.id, site_id: site.id })
    expect(siteUpdated.actor).toEqual({ type: 'platform_credential', id: c.account.xAuthToken.split(':')[0], label: c.account.xAuthToken.split(':')[0] })
    // The entry names the request: the id its answer carried, the address and the user agent.
    expect(siteUpdated.request).toEqual({ id: renamed.headers['x-request-id'], address: '127.0.0.1', user_agent: 'acme-sync/2.1', idempotency_key: null })
    expect(only(entries, 'site.created').changes.title).toEqual([null, 'Old title'])
    expect(only(entries, 'tag.updated').changes).toEqual({ value: ['eu', 'de'] })
    expect(only(entries, 'tag.deleted').changes.key).toEqual(['region', null])
    const streamCreated = only(entries, 'stream.created')
    expect(streamCreated.actor.type).toBe('token')
    expect(streamCreated.actor.label).toBe('default')
    expect(only(entries, 'stream.updated').changes.name?.[1]).toBe(newName)
    expect(only(entries, 'data_source.created').target.site_id).toBe(site.id)
    expect(only(entries, 'channel.created').changes.name).toEqual([null, 'Google'])
    expect(only(entries, 'channel.updated').changes).toEqual({ filter: ['', 'price > 0'] })
    expect(only(entries, 'channel.deleted').target).toEqual({ type: 'channel', id: channel.id, site_id: site.id })
    expect(only(entries, 'rule.updated').changes).toEqual({ channel_id: [null, null], enabled: [true, false] })
    expect(only(entries, 'rule.reordered').changes).toEqual({
      order: [
        [rule.id, second.id],
        [second.id, rule.id],
      ],
    })
    expect(only(entries, 'rule.deleted', second.id).changes.attribute).toEqual(['title', null])
    const requested = only(entries, 'run.requested')
    expect(requested.target).toEqual({ type: 'run', id: run.json<{ process_id: string }>().process_id, site_id: site.id })
    expect(requested.actor.type).toBe('token')
    // An import names no id: the entry lists what was set, not an id that went from nothing to nothing.
    expect(requested.changes).toEqual({ action: [null, 'import'] })
    const deletions = entries.filter((e) => e.action === 'products.deleted')
    expect(deletions.map((e) => e.changes.products?.[1])).toEqual([2, 'all'])
    // Uploads are not in the log: their batches are the record.
    expect(entries.some((e) => e.action.startsWith('batch') || e.action === 'products.uploaded')).toBe(false)
    // Newest first, ids only ever smaller down the list.
    expect(entries.map((e) => Number(e.id))).toEqual(entries.map((e) => Number(e.id)).sort((a, b) => b - a))
  })

  it('never records a secret: tokens, webhook secrets and destination URLs show as changed', async () => {
    const c = await client(t)
    const site = await createSite(c, {
      title: 'Secrets',
      project_id: (await c.post('/projects', { name: 'P' })).json<{ Projects: { id: string }[] }>().Projects[0]!.id,
    })
    const hook = await c.post('/webhooks', { url: 'https://hooks.example.com/in?token=hook-token-5521' })
    expect(hook.statusCode, hook.body).toBe(201)
    const webhook = hook.json<{ Webhooks: { id: string; secret: string }[] }>().Webhooks[0]!
    const rotated = (await c.post(`/webhooks/${webhook.id}/rotate-secret`)).json<{ Webhooks: { secret: string }[] }>().Webhooks[0]!
    const channel = await c.post(`/sites/${site.id}/channels`, {
      name: 'Push',
      export_name: 'google-shopping',
      destinations: [{ type: 'http', url: 'https://push.example.com/feed?token=dest-pass-9931' }],
    })
    expect(channel.statusCode, channel.body).toBe(201)
    const channelId = channel.json<{ Channels: { id: string }[] }>().Channels[0]!.id
    const moved = await c.put(`/sites/${site.id}/channels/${channelId}`, {
      destinations: [{ type: 'http', url: 'https://push.example.com/feed?token=dest-pass-NEW1' }],
    })
    expect(moved.statusCode, moved.body).toBe(200)

    const entries = await allEntries(c)
    const text = JSON.stringify(entries)
    const stored = JSON.stringify(await t.db.selectFrom('activity').selectAll().where('account_id', '=', c.account.accountId).execute())
    const accountSecrets = [c.account.token, c.account.xAuthToken.split(':')[1]!]
    const secrets = [webhook.secret, rotated.secret, 'hook-token-5521', 'dest-pass-9931', 'dest-pass-NEW1', ...accountSecrets]
    for (const secret of secrets) {
      expect(text).not.toContain(secret)
      expect(stored).not.toContain(secret)
    }
    expect(only(entries, 'webhook.created').changes).toMatchObject({ secret: 'changed', url: 'changed', origin: [null, 'https://hooks.example.com'] })
    expect(only(entries, 'webhook.secret_rotated').changes).toEqual({ secret: 'changed', previous_secret: 'changed' })
    expect(only(entries, 'channel.updated').changes).toEqual({ destination_url: 'changed' })
    expect(only(entries, 'channel.created').changes.destinations).toEqual([
      null,
      [{ kind: 'http', name: null, active: true, origin: 'https://push.example.com' }],
    ])
  })

  it('pages newest first on a cursor that stays put while entries arrive', async () => {
    const c = await client(t)
    for (let i = 0; i < 7; i++) expect((await c.post('/projects', { name: `P${i}` })).statusCode).toBe(201)
    const first = await activity(c, '?action=project.created&limit=3')
    expect(first.Activity.map((e) => e.changes.name?.[1])).toEqual(['P6', 'P5', 'P4'])
    expect(first.next).toContain(`cursor=${first.next_cursor}`)
    expect(first.next).toContain('action=project.created')
    // New entries arrive between the pages: they never shift the next one.
    for (let i = 7; i < 12; i++) expect((await c.post('/projects', { name: `P${i}` })).statusCode).toBe(201)
    const second = await activity(c, `?action=project.created&limit=3&cursor=${first.next_cursor}`)
    expect(second.Activity.map((e) => e.changes.name?.[1])).toEqual(['P3', 'P2', 'P1'])
    const third = await activity(c, `?action=project.created&limit=3&cursor=${second.next_cursor}`)
    expect(third.Activity.map((e) => e.changes.name?.[1])).toEqual(['P0'])
    expect(third.next_cursor).toBeNull()
    const fresh = await activity(c, '?action=project.created&limit=2')
    expect(fresh.Activity.map((e) => e.changes.name?.[1])).toEqual(['P11', 'P10'])
  })

  it('filters by action prefix, actor, target and time, and names a wrong filter', async () => {
    const c = await client(t)
    const site = await createSite(c, {
      title: 'Filters',
      project_id: (await c.post('/projects', { name: 'P' })).json<{ Projects: { id: string }[] }>().Projects[0]!.id,
    })
    const rule = (await c.post(`/sites/${site.id}/rules`, { attribute: 'brand', then: [{ action: 'trim' }] })).json<{ Rules: { id: string }[] }>().Rules[0]!
    await c.put(`/sites/${site.id}/rules/${rule.id}`, { description: 'tidy' })
    await t.request({ method: 'POST', url: `/platform/v2/process/${site.id}`, headers: c.account.bearer, payload: { action: 'import' } })

    expect((await activity(c, '?action=rule.*')).Activity.map((e) => e.action)).toEqual(['rule.updated', 'rule.created'])
    expect((await activity(c, '?action=rule.updated')).Activity).toHaveLength(1)
    expect((await activity(c, '?actor=token')).Activity.map((e) => e.action)).toEqual(['run.requested'])
    const clientId = c.account.xAuthToken.split(':')[0]
    expect((await activity(c, `?actor=platform_credential:${clientId}&action=site.*`)).Activity.map((e) => e.action)).toEqual(['site.created'])
    expect((await activity(c, `?target_type=rule&target_id=${rule.id}`)).Activity).toHaveLength(2)
    const all = (await activity(c)).Activity
    const newest = all[0]!.occurred_at
    expect((await activity(c, `?since=${encodeURIComponent(newest)}`)).Activity.every((e) => e.occurred_at >= newest)).toBe(true)
    expect((await activity(c, `?until=${encodeURIComponent(newest)}`)).Activity.every((e) => e.occurred_at < newest)).toBe(true)
    expect((await activity(c, '?since=2000-01-01&until=2000-01-02')).Activity).toEqual([])
    // A time without a zone is UTC, whatever the server's zone.
    const minute = newest.slice(0, 16)
    expect((await activity(c, `?since=${minute}`)).Activity.length).toBe((await activity(c, `?since=${minute}:00Z`)).Activity.length)

    for (const [query, named] of [
      ['?action=rule', /action/],
      ['?action=*', /action/],
      ['?actor=robot', /actor.*robot/],
      ['?since=yesterday', /since/],
      ['?since=2026-02-30', /since.*2026-02-30/],
      ['?actor=console:a%00b', /actor.*NUL/],
      ['?until=2026-13-45T99:00:00Z', /until/],
      ['?limit=101', /limit/],
      ['?limit=0', /limit/],
      ['?limit=0x10', /limit/],
      ['?limit=1e2', /limit/],
      ['?limit=%205', /limit/],
      ['?actor=token:', /actor.*names no id/],
      [`?action=${'a'.repeat(101)}.*`, /action.*at most 100/],
      ['?cursor=not-a-cursor', /cursor/],
      [`?target_id=${'x'.repeat(300)}`, /target_id/],
    ] as const) {
      const response = await c.get(`/activity${query}`)
      expect(response.statusCode, query).toBe(400)
      expect(response.json<{ success: boolean; message: string }>().message).toMatch(named)
    }
  })

  it("lists a site's entries only, and never another account's", async () => {
    const a = await client(t, 'A')
    const b = await client(t, 'B')
    const projectId = (await a.post('/projects', { name: 'P' })).json<{ Projects: { id: string }[] }>().Projects[0]!.id
    const one = await createSite(a, { title: 'One', project_id: projectId })
    const two = await createSite(a, { title: 'Two', project_id: projectId })
    await a.put(`/sites/${two.id}`, { title: 'Two renamed' })
    const oneEntries = (await activity(a, '', `/sites/${one.id}/activity`)).Activity
    expect(oneEntries.map((e) => e.action)).toEqual(['site.created'])
    expect(oneEntries.every((e) => e.target.site_id === one.id)).toBe(true)
    // Another account's site is a 404, its entries in no list of this account.
    expect((await b.get(`/sites/${one.id}/activity`)).statusCode).toBe(404)
    expect((await b.get(`/sites/${one.id}/activity`)).json<{ success: boolean }>().success).toBe(false)
    const seenByB = await allEntries(b)
    expect(seenByB.every((e) => e.account_id === b.account.accountId)).toBe(true)
    expect(seenByB.some((e) => e.target.id === one.id || e.target.id === two.id)).toBe(false)
    // A deleted site's entries stay in the account's log.
    await a.del(`/sites/${two.id}`)
    expect((await activity(a, `?target_type=site&target_id=${two.id}`)).Activity.map((e) => e.action)).toEqual(['site.deleted', 'site.updated', 'site.created'])
  })

  it('names every answer with X-Request-Id, keeping a plausible one the client sent', async () => {
    const c = await client(t)
    for (const [method, url, headers] of [
      ['GET', '/platform/v2/projects', c.account.platform],
      ['GET', '/platform/v2/projects', {}],
      ['GET', '/platform/v2/nowhere', c.account.platform],
      ['GET', '/streams', c.account.bearer],
      ['GET', '/console/sign-in', {}],
      ['GET', '/healthz', {}],
    ] as const) {
      const response = await t.request({ method, url, headers })
      expect(response.headers['x-request-id'], url).toMatch(/^[0-9a-f-]{36}$/)
    }
    const mine = await t.request({
      method: 'POST',
      url: '/platform/v2/projects',
      headers: { ...c.account.platform, 'x-request-id': 'client-req-42' },
      payload: { name: 'Mine' },
    })
    expect(mine.headers['x-request-id']).toBe('client-req-42')
    expect((await activity(c, '?action=project.created&limit=1')).Activity[0]!.request?.id).toBe('client-req-42')
    // Refused before any route: a path parameter past its bound.
    const tooLong = await t.request({ method: 'GET', url: `/platform/v2/sites/${'x'.repeat(1001)}/activity`, headers: c.account.platform })
    expect(tooLong.statusCode).toBe(414)
    expect(tooLong.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    expect(tooLong.body.length).toBeLessThan(600)
    const odd = await t.request({ method: 'GET', url: '/platform/v2/projects', headers: { ...c.account.platform, 'x-request-id': 'x'.repeat(500) } })
    expect(odd.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('keeps entries ACTIVITY_RETENTION_DAYS, then the hourly cleanup removes them', async () => {
    const c = await client(t)
    await c.post('/projects', { name: 'Old' })
    const report = await runCleanup(t.db, { now: new Date(Date.now() + 364 * 86_400_000), activityRetentionDays: 365 })
    expect((await activity(c, '?action=project.created')).Activity).toHaveLength(1)
    const later = await runCleanup(t.db, { now: new Date(Date.now() + 366 * 86_400_000), activityRetentionDays: 365 })
    expect(later.activity).toBeGreaterThan(report.activity)
    expect((await activity(c, '?action=project.created')).Activity).toHaveLength(0)
  })
})
