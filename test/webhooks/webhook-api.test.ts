import { describe, expect, it } from 'vitest'
import type { ResolveHost } from '../../src/net/outbound-guard.js'
import { client, headersFor, type Client } from '../helpers/clients.js'
import { useTestApp } from '../helpers/test-app.js'

// The subscriptions of an account through the platform interface: create, read, change, rotate,
// delete; what is refused (400 naming the field), and what another account sees (404). The outbound
// guard is as the operator leaves it by default: private, loopback and metadata targets are refused,
// and plain http is not accepted. Names resolve through a stand-in DNS.

const resolveHost: ResolveHost = async (hostname) => {
  if (hostname === 'hooks.example.com') return [{ address: '93.184.216.34', family: 4 }]
  if (hostname === 'internal.example.com') return [{ address: '10.1.2.3', family: 4 }]
  throw Object.assign(new Error(`${hostname} not found`), { code: 'ENOTFOUND' })
}

const t = useTestApp({ MAX_WEBHOOKS_PER_ACCOUNT: '3', WEBHOOK_CONCURRENCY: '0' }, { resolveHost })

const URL_A = 'https://hooks.example.com/catalog'

interface WebhookJson {
  id: string
  url: string
  events: string[]
  active: boolean
  description: string
  secret?: string
  previous_secret_expires_at: string | null
  consecutive_failures: number
  disabled_reason: string | null
  links: Record<string, string>[]
}

function webhookOf(response: { statusCode: number; body: string; json: <T>() => T }, status = 200): WebhookJson {
  expect(response.statusCode, response.body).toBe(status)
  const body = response.json<{ success: boolean; Webhooks: WebhookJson[] }>()
  expect(body.success).toBe(true)
  expect(body.Webhooks).toHaveLength(1)
  return body.Webhooks[0] as WebhookJson
}

async function create(c: Client, body: Record<string, unknown> = { url: URL_A }): Promise<WebhookJson> {
  return webhookOf(await c.post('/webhooks', body), 201)
}

function expectBadRequest(response: { statusCode: number; body: string; json: <T>() => T }, pattern: RegExp): void {
  expect(response.statusCode, response.body).toBe(400)
  const body = response.json<{ success: boolean; message: string }>()
  expect(body.success).toBe(false)
  expect(body.message).toMatch(pattern)
}

describe('webhook subscriptions', () => {
  it('are created with every event by default and a whsec_ secret shown only in the answer to the create', async () => {
    const c = await client(t)
    const created = await create(c, { id: null, url: URL_A, description: 'ERP', events: null, active: null })
    expect(created).toMatchObject({ url: URL_A, events: ['all'], active: true, description: 'ERP', consecutive_failures: 0, disabled_reason: null })
    expect(created.id).toMatch(/^\d+$/)
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
    expect(Buffer.from((created.secret ?? '').slice('whsec_'.length), 'base64').length).toBeGreaterThanOrEqual(24)
    expect(created.links).toContainEqual({ self: `http://localhost:80/platform/v2/webhooks/${created.id}` })

    const read = webhookOf(await c.get(`/webhooks/${created.id}`))
    expect(read).not.toHaveProperty('secret')
    expect(read).toMatchObject({ id: created.id, url: URL_A, events: ['all'] })
    const list = await c.get('/webhooks')
    expect(list.statusCode, list.body).toBe(200)
    const listed = list.json<{ Webhooks: WebhookJson[] }>().Webhooks
    expect(listed.map((w) => w.id)).toEqual([created.id])
    expect(listed[0]).not.toHaveProperty('secret')
  })

  it('take a list of event types, each once, in a stable order; "all" takes every type', async () => {
    const c = await client(t)
    const some = await create(c, { url: URL_A, events: ['run.failed', 'batch.processed', 'run.failed'] })
    expect(some.events).toEqual(['batch.processed', 'run.failed'])
    const all = await create(c, { url: URL_A, events: 'all' })
    expect(all.events).toEqual(['all'])
    const mixed = await create(c, { url: URL_A, events: ['export.finished', 'all'] })
    expect(mixed.events).toEqual(['all'])
  })

  it('change the given fields on PUT and keep the others; null means "not given"', async () => {
    const c = await client(t)
    const created = await create(c, { url: URL_A, description: 'first' })
    const changed = webhookOf(
      await c.put(`/webhooks/${created.id}`, { url: 'https://hooks.example.com/v2', events: ['stream.status_changed'], description: null, active: false }),
    )
    expect(changed).toMatchObject({ url: 'https://hooks.example.com/v2', events: ['stream.status_changed'], description: 'first', active: false })
    expect(changed).not.toHaveProperty('secret')
    const unchanged = webhookOf(await c.put(`/webhooks/${created.id}`, {}))
    expect(unchanged).toMatchObject({ url: 'https://hooks.example.com/v2', active: false, description: 'first' })
    const reactivated = webhookOf(await c.put(`/webhooks/${created.id}`, { active: true }))
    expect(reactivated.active).toBe(true)
  })

  it('refuse bad input with a 400 that names the field', async () => {
    const c = await client(t)
    expectBadRequest(await c.post('/webhooks', {}), /^url: is required/)
    expectBadRequest(await c.post('/webhooks', { url: '' }), /^url: must not be empty/)
    expectBadRequest(await c.post('/webhooks', { url: 'not a url' }), /^url: not a url is not a valid absolute URL/)
    expectBadRequest(await c.post('/webhooks', { url: 'http://hooks.example.com/x' }), /^url: must be an https URL.*WEBHOOK_ALLOW_HTTP/)
    expectBadRequest(await c.post('/webhooks', { url: 'ftp://hooks.example.com/x' }), /^url: must be an https URL/)
    expectBadRequest(await c.post('/webhooks', { url: 'https://user:pw@hooks.example.com/x' }), /^url: credentials in the URL are not allowed/)
    expectBadRequest(await c.post('/webhooks', { url: `https://hooks.example.com/${'a'.repeat(2100)}` }), /^url: at most 2048 characters/)
    expectBadRequest(await c.post('/webhooks', { url: URL_A, events: [] }), /^events: must name at least one event type/)
    expectBadRequest(
      await c.post('/webhooks', { url: URL_A, events: ['run.failed', 'run.exploded'] }),
      /^events\[1\]: unknown event type "run.exploded"; known: batch.uploaded/,
    )
    expectBadRequest(await c.post('/webhooks', { url: URL_A, events: [42] }), /^events\[0\]: must be a string/)
    expectBadRequest(await c.post('/webhooks', { url: URL_A, events: { all: true } }), /^events: must be a list of event types/)
    expectBadRequest(await c.post('/webhooks', { url: URL_A, description: 'x'.repeat(501) }), /^description: at most 500 characters/)
    expectBadRequest(await c.post('/webhooks', { url: URL_A, active: 'sometimes' }), /^active: must be boolean/)
    const created = await create(c)
    expectBadRequest(await c.put(`/webhooks/${created.id}`, { events: 'nothing' }), /^events\[0\]: unknown event type "nothing"/)
    expectBadRequest(await c.get(`/webhooks/${created.id}/deliveries?status=lost`), /^status: must be one of pending, delivered, failed/)
    const after = await c.get('/webhooks')
    expect(after.json<{ Webhooks: WebhookJson[] }>().Webhooks).toHaveLength(1)
  })

  it('refuse private, loopback, link-local and metadata targets with a 400 while the operator setting is off', async () => {
    const c = await client(t)
    const refused: [string, RegExp][] = [
      ['https://10.0.0.7/hook', /^url: https:\/\/10\.0\.0\.7\/hook is not allowed: 10\.0\.0\.7 is a private network address$/],
      ['https://127.0.0.1:8443/hook', /is not allowed: 127\.0\.0\.1 is a loopback address$/],
      ['https://localhost/hook', /is not allowed: localhost is a loopback address$/],
      ['https://[::1]/hook', /is not allowed: ::1 is a loopback address$/],
      ['https://169.254.10.1/hook', /is not allowed: 169\.254\.10\.1 is a link-local address$/],
      ['https://169.254.169.254/latest/meta-data', /is not allowed: 169\.254\.169\.254 is a cloud metadata service address$/],
      ['https://metadata.google.internal/', /is not allowed: metadata\.google\.internal is a cloud metadata service address$/],
      ['https://internal.example.com/hook', /is not allowed: internal\.example\.com resolves to a private network address$/],
    ]
    for (const [url, message] of refused) expectBadRequest(await c.post('/webhooks', { url }), message)
    const created = await create(c)
    expectBadRequest(
      await c.put(`/webhooks/${created.id}`, { url: 'https://192.168.1.1/x' }),
      /^url: .* is not allowed: 192\.168\.1\.1 is a private network address$/,
    )
    expect(webhookOf(await c.get(`/webhooks/${created.id}`)).url).toBe(URL_A)
  })

  it('are bounded per account (MAX_WEBHOOKS_PER_ACCOUNT)', async () => {
    const c = await client(t)
    for (let i = 0; i < 3; i++) await create(c)
    expectBadRequest(await c.post('/webhooks', { url: URL_A }), /^An account can have at most 3 webhooks \(MAX_WEBHOOKS_PER_ACCOUNT\); it has 3/)
    // Another account has room of its own.
    await create(await client(t))
  })

  it('rotate the secret: a new one, shown once, and the old one still valid for 24 hours', async () => {
    const c = await client(t)
    const created = await create(c)
    const rotated = webhookOf(await c.post(`/webhooks/${created.id}/rotate-secret`))
    expect(rotated.secret).toMatch(/^whsec_/)
    expect(rotated.secret).not.toBe(created.secret)
    const expires = new Date(`${rotated.previous_secret_expires_at?.replace(' ', 'T')}Z`).getTime()
    expect(Math.abs(expires - (Date.now() + 24 * 3600 * 1000))).toBeLessThan(60_000)
    const row = await t.db.selectFrom('webhook').select(['secret', 'previous_secret']).where('id', '=', created.id).executeTakeFirstOrThrow()
    expect(row).toEqual({ secret: rotated.secret, previous_secret: created.secret })
    expect(webhookOf(await c.get(`/webhooks/${created.id}`))).not.toHaveProperty('secret')
  })

  it('rotate the secret once for a retried request with its Idempotency-Key: the same secret again, the old one still signing', async () => {
    const c = await client(t)
    const created = await create(c)
    const rotate = () =>
      t.request({
        method: 'POST',
        url: `/platform/v2/webhooks/${created.id}/rotate-secret`,
        headers: { ...headersFor(c.account, 'x-auth-token'), 'idempotency-key': `rotate-${created.id}` },
      })
    const first = await rotate()
    expect(first.statusCode, first.body).toBe(200)
    const again = await rotate()
    expect(again.statusCode).toBe(200)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(webhookOf(again).secret).toBe(webhookOf(first).secret)
    const row = await t.db.selectFrom('webhook').select(['secret', 'previous_secret']).where('id', '=', created.id).executeTakeFirstOrThrow()
    expect(row).toEqual({ secret: webhookOf(first).secret, previous_secret: created.secret })
  })

  it('are deleted with a 200 {success: true}; afterwards they are not found', async () => {
    const c = await client(t)
    const created = await create(c)
    const deleted = await c.del(`/webhooks/${created.id}`)
    expect(deleted.statusCode, deleted.body).toBe(200)
    expect(deleted.json()).toEqual({ success: true })
    const gone = await c.get(`/webhooks/${created.id}`)
    expect(gone.statusCode).toBe(404)
    expect(gone.json()).toMatchObject({ success: false, message: 'The requested resource could not be found' })
  })

  it('of another account cannot be read, changed, rotated, deleted or retried: 404, and nothing changes', async () => {
    const owner = await client(t, 'Owner')
    const stranger = await client(t, 'Stranger')
    const created = await create(owner)
    const id = created.id
    const attempts = [
      stranger.get(`/webhooks/${id}`),
      stranger.put(`/webhooks/${id}`, { url: 'https://hooks.example.com/stolen', active: false }),
      stranger.post(`/webhooks/${id}/rotate-secret`),
      stranger.get(`/webhooks/${id}/deliveries`),
      stranger.post(`/webhooks/${id}/deliveries/1/retry`),
      stranger.del(`/webhooks/${id}`),
      owner.get('/webhooks/not-a-number'),
      owner.get('/webhooks/99999999999'),
      owner.post(`/webhooks/${id}/deliveries/abc/retry`),
    ]
    for (const response of await Promise.all(attempts)) {
      expect(response.statusCode, response.body).toBe(404)
      expect(response.json()).toMatchObject({ success: false })
    }
    expect((await stranger.get('/webhooks')).json()).toEqual({ success: true, Webhooks: [] })
    const still = webhookOf(await owner.get(`/webhooks/${id}`))
    expect(still).toMatchObject({ url: URL_A, active: true, previous_secret_expires_at: null })
  })

  it('answer bearer tokens as well as X-Auth-Token, and 401 without a credential', async () => {
    const c = await client(t)
    const created = await create(c)
    const viaBearer = await c.send('GET', `/webhooks/${created.id}`, undefined, 'bearer')
    expect(webhookOf(viaBearer).id).toBe(created.id)
    const anonymous = await t.request({ method: 'GET', url: '/platform/v2/webhooks' })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json()).toMatchObject({ success: false })
  })

  it('list no deliveries before an event', async () => {
    const c = await client(t)
    const created = await create(c)
    const response = await c.get(`/webhooks/${created.id}/deliveries`)
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toEqual({ success: true, Deliveries: [] })
  })
})
