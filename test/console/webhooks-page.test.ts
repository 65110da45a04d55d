import { afterAll, describe, expect, it } from 'vitest'
import { client, type Client } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'
import { useTestApp } from '../helpers/test-app.js'
import { recordUpload, startReceiver, type Receiver } from '../webhooks/receiver.js'
import { consoleUser } from './console-session.js'

// The console's webhooks page through HTTP (issue 22): an account's subscriptions and their
// deliveries, paged and filtered on the server, and the retry of a delivery. Receivers on 127.0.0.1
// (loopback and plain http allowed here), with short back-offs and a retry window of 3.6 s, so that a
// receiver answering 500 makes a failed delivery within seconds.
const t = useTestApp({
  ALLOW_PRIVATE_DESTINATIONS: 'true',
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_POLL_SECONDS: '0.2',
  WEBHOOK_RETRY_BASE_SECONDS: '0.2',
  WEBHOOK_RETRY_HOURS: '0.001',
})

const receivers: Receiver[] = []
afterAll(async () => {
  await t.app.close()
  for (const receiver of receivers) await receiver.close()
})

interface DeliveryJson {
  id: string
  status: string
  attempts: number
  last_response_code: number | null
}

async function deliveriesOf(c: Client, webhookId: string): Promise<DeliveryJson[]> {
  const response = await c.get(`/webhooks/${webhookId}/deliveries`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ Deliveries: DeliveryJson[] }>().Deliveries
}

async function subscribe(c: Client, url: string): Promise<string> {
  const response = await c.post('/webhooks', { url, events: 'all', description: 'ERP <test>' })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ Webhooks: { id: string }[] }>().Webhooks[0]!.id
}

interface FailedFixture {
  c: Client
  receiver: Receiver
  webhookId: string
  delivery: DeliveryJson
}

// One subscription whose receiver answers 500 until a delivery has failed for good, shared by the
// tests below (the retry, which changes it, comes last).
let failed: Promise<FailedFixture> | undefined
function failedDelivery(): Promise<FailedFixture> {
  failed ??= (async () => {
    const c = await client(t, 'Webhook page account')
    const receiver = await startReceiver()
    receivers.push(receiver)
    receiver.fallback = { status: 500, body: 'receiver exploded <b>here</b>' }
    const webhookId = await subscribe(c, receiver.url)
    await recordUpload(t.db, c.account.accountId)
    const delivery = await eventually(async () => (await deliveriesOf(c, webhookId)).find((d) => d.status === 'failed'), 'a failed delivery')
    return { c, receiver, webhookId, delivery }
  })()
  return failed
}

/** The table row of a delivery on a page. */
function deliveryRow(page: string, deliveryId: string): string {
  return new RegExp(`<tr id="delivery-${deliveryId}">[\\s\\S]*?</tr>`).exec(page)?.[0] ?? ''
}

describe('the webhooks page', () => {
  it('lists a subscription and its failed delivery: status, attempts, response code and the kept body', async () => {
    const { c, receiver, webhookId, delivery } = await failedDelivery()
    const user = await consoleUser(t.app, c.account.xAuthToken)
    const page = await user.get('/console/webhooks')
    expect(page.status).toBe(200)
    expect(page.body).toContain(`Webhook #${webhookId}`)
    expect(page.body).toContain(`<code>${receiver.url}</code>`)
    expect(page.body).toContain('ERP &lt;test&gt;')
    expect(page.body).toContain('Consecutive failures')
    const row = deliveryRow(page.body, delivery.id)
    expect(row).toContain('batch.uploaded')
    expect(row).toContain('badge-failed')
    expect(row).toContain('HTTP 500')
    expect(row).toContain(`<td class="num">${delivery.attempts}</td>`)
    expect(row).toContain('<pre>receiver exploded &lt;b&gt;here&lt;/b&gt;</pre>')
    expect(page.body).not.toContain('<b>here</b>')
  })

  it('filters one subscription by status and pages on the server; another account cannot name it', async () => {
    const { c, webhookId, delivery } = await failedDelivery()
    const user = await consoleUser(t.app, c.account.token)
    const failedOnly = await user.get(`/console/webhooks?webhook=${webhookId}&status=failed`)
    expect(failedOnly.status).toBe(200)
    expect(deliveryRow(failedOnly.body, delivery.id)).toContain('badge-failed')
    expect(failedOnly.body).toMatch(/<option value="failed"\s+selected>/)
    const delivered = await user.get(`/console/webhooks?webhook=${webhookId}&status=delivered`)
    expect(delivered.body).toContain('No deliveries with status delivered.')
    expect(deliveryRow(delivered.body, delivery.id)).toBe('')
    const later = await user.get(`/console/webhooks?webhook=${webhookId}&offset=20`)
    expect(later.body).toContain('Newer deliveries')
    expect(deliveryRow(later.body, delivery.id)).toBe('')
    const other = await consoleUser(t.app, (await t.account('Someone else')).token)
    expect((await other.get(`/console/webhooks?webhook=${webhookId}`)).status).toBe(404)
    const own = await other.get('/console/webhooks')
    expect(own.status).toBe(200)
    expect(own.body).toContain('No webhooks yet')
    expect(own.body).not.toContain(`Webhook #${webhookId}`)
  })

  it('offers no retry while a subscription is not active, and says how to activate it', async () => {
    const c = await client(t, 'Inactive webhook account')
    const receiver = await startReceiver()
    receivers.push(receiver)
    const webhookId = await subscribe(c, receiver.url)
    await recordUpload(t.db, c.account.accountId)
    const delivered = await eventually(async () => (await deliveriesOf(c, webhookId)).find((d) => d.status === 'delivered'), 'a delivery')
    const user = await consoleUser(t.app, c.account.xAuthToken)
    expect((await user.get('/console/webhooks')).body).toContain(`/console/webhooks/${webhookId}/deliveries/${delivered.id}/retry`)
    expect((await c.put(`/webhooks/${webhookId}`, { active: false })).statusCode).toBe(200)
    const page = await user.get('/console/webhooks')
    expect(deliveryRow(page.body, delivered.id)).toContain('badge-delivered')
    expect(page.body).toContain('The webhook is not active')
    expect(page.body).not.toContain(`/deliveries/${delivered.id}/retry`)
  })

  it('refuses a retry without the CSRF token (403) and one of another account (404), changing nothing', async () => {
    const { c, webhookId, delivery } = await failedDelivery()
    expect((await c.put(`/webhooks/${webhookId}`, { active: true })).statusCode).toBe(200)
    const url = `/console/webhooks/${webhookId}/deliveries/${delivery.id}/retry`
    const user = await consoleUser(t.app, c.account.xAuthToken)
    expect((await user.post(url, {})).status).toBe(403)
    expect((await user.post(url, { _csrf: 'not-the-token' })).status).toBe(403)
    const other = await consoleUser(t.app, (await t.account('Another account')).xAuthToken)
    const refused = await other.post(url, { _csrf: await other.csrf('/console/webhooks') })
    expect(refused.status).toBe(404)
    expect(refused.body).toContain('Not found')
    expect((await user.post(`/console/webhooks/${webhookId}/deliveries/999999/retry`, { _csrf: await user.csrf('/console/webhooks') })).status).toBe(404)
    expect((await deliveriesOf(c, webhookId)).find((d) => d.id === delivery.id)?.status).toBe('failed')
  })

  it('retries a failed delivery: 303 back to the page, the delivery pending again, then delivered once the receiver answers 200', async () => {
    const { c, receiver, webhookId, delivery } = await failedDelivery()
    // The subscription may have been disabled when the delivery failed for good; a retry needs it active.
    expect((await c.put(`/webhooks/${webhookId}`, { active: true })).statusCode).toBe(200)
    receiver.fallback = 200
    const before = receiver.received.length
    const user = await consoleUser(t.app, c.account.xAuthToken)
    const page = await user.get('/console/webhooks')
    const form = `action="/console/webhooks/${webhookId}/deliveries/${delivery.id}/retry"`
    expect(deliveryRow(page.body, delivery.id)).toContain(form)
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? ''
    const retried = await user.post(`/console/webhooks/${webhookId}/deliveries/${delivery.id}/retry`, { _csrf: csrf, offset: '0' })
    expect(retried.status).toBe(303)
    expect(retried.location).toBe(`/console/webhooks?webhook=${webhookId}&offset=0&retried=${delivery.id}#delivery-${delivery.id}`)
    const back = await user.get(retried.location!.replace(/#.*$/, ''))
    expect(back.status).toBe(200)
    expect(back.body).toContain(`Delivery #${delivery.id} (batch.uploaded) of webhook #${webhookId} is sent again now`)
    // Pending until the worker's attempt ends, which it may already have done.
    expect(deliveryRow(back.body, delivery.id)).toMatch(/badge-(pending|delivered)/)
    const done = await eventually(
      async () => (await deliveriesOf(c, webhookId)).find((d) => d.id === delivery.id && d.status === 'delivered'),
      'the retried delivery',
    )
    expect(done.last_response_code).toBe(200)
    expect(receiver.received.length).toBeGreaterThan(before)
    expect(deliveryRow((await user.get('/console/webhooks')).body, delivery.id)).toContain('badge-delivered')
  })
})
