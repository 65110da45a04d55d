import { createHmac } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { afterAll, describe, expect, it } from 'vitest'
import { inTransaction } from '../../src/db/transaction.js'
import type { Run } from '../../src/db/schema.js'
import { addSiteError } from '../../src/sites/site-errors.js'
import { recordEvent } from '../../src/webhooks/outbox.js'
import { recordRunEnded } from '../../src/webhooks/run-events.js'
import { batchUploadedData } from '../../src/webhooks/payloads.js'
import { client, type Client } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'
import { factories } from '../helpers/factories.js'
import { useTestApp } from '../helpers/test-app.js'
import { recordUpload, startReceiver, uploadedBatch, type Receiver, type TimelineEntry } from './receiver.js'

// Deliveries to receivers on 127.0.0.1 (the operator settings allow loopback and plain http here),
// with short back-offs: a first retry after about 0.3 s, doubling, for a window of 7.2 s, and a
// subscription disabled after 7 failed attempts in a row.
const t = useTestApp({
  ALLOW_PRIVATE_DESTINATIONS: 'true',
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_POLL_SECONDS: '0.2',
  WEBHOOK_RETRY_BASE_SECONDS: '0.3',
  WEBHOOK_RETRY_HOURS: '0.002',
  WEBHOOK_DISABLE_AFTER_FAILURES: '7',
  WEBHOOK_CONCURRENCY: '4',
  WEBHOOK_ACCOUNT_CONCURRENCY: '2',
})

const given = factories(t)
const receivers: Receiver[] = []
async function receiver(timeline?: TimelineEntry[]): Promise<Receiver> {
  const started = await startReceiver(timeline)
  receivers.push(started)
  return started
}

afterAll(async () => {
  // The app first: its worker aborts the attempts that hanging receivers hold.
  await t.app.close()
  for (const r of receivers) await r.close()
})

interface Subscription {
  id: string
  secret: string
}

async function subscribe(c: Client, url: string, body: Record<string, unknown> = {}): Promise<Subscription> {
  const response = await c.post('/webhooks', { url, ...body })
  expect(response.statusCode, response.body).toBe(201)
  const [created] = response.json<{ Webhooks: Subscription[] }>().Webhooks
  return created as Subscription
}

interface DeliveryJson {
  id: string
  event_id: string
  event_type: string
  status: string
  attempts: number
  last_response_code: number | null
  last_error: string | null
  response_body: string | null
  next_attempt_at: string | null
}

async function deliveries(c: Client, webhookId: string): Promise<DeliveryJson[]> {
  const response = await c.get(`/webhooks/${webhookId}/deliveries`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ Deliveries: DeliveryJson[] }>().Deliveries
}

async function deliveryIn(c: Client, webhookId: string, status: string): Promise<DeliveryJson> {
  return eventually(async () => (await deliveries(c, webhookId)).find((d) => d.status === status), `a ${status} delivery of webhook ${webhookId}`)
}

/**
 * Records another event of the account and waits until its delivery is delivered. Deliveries are
 * claimed in the order they fell due, so by then the worker has claimed, and sent, anything of the
 * subscription that was due before it: a delivery sent twice, or one that must never be sent, has
 * arrived by now. Returns the new event's id.
 */
async function deliverOneMore(c: Client, webhookId: string): Promise<string> {
  const eventId = await recordUpload(t.db, c.account.accountId)
  await eventually(async () => (await deliveries(c, webhookId)).find((d) => d.event_id === eventId && d.status === 'delivered'), 'the later delivery')
  return eventId
}

async function webhook(c: Client, id: string): Promise<Record<string, unknown>> {
  const response = await c.get(`/webhooks/${id}`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ Webhooks: Record<string, unknown>[] }>().Webhooks[0] ?? {}
}

/** The Standard Webhooks signature, recomputed from the specification: base64 HMAC-SHA256 of `id.timestamp.body` under the secret's bytes. */
function expectedSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}

function headersOf(request: Receiver['received'][number]): Record<string, string> {
  return Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]))
}

describe('webhook deliveries', () => {
  it('POST the event once, signed so that a Standard Webhooks verifier and a recomputed HMAC both accept it', async () => {
    const c = await client(t)
    const r = await receiver()
    const sub = await subscribe(c, r.url)
    const batch = uploadedBatch(c.account.accountId)
    const eventId = await recordUpload(t.db, c.account.accountId, batch.id)
    const request = await eventually(async () => r.received[0], 'the delivery')
    const headers = headersOf(request)
    expect(request.path).toBe('/hooks')
    expect(headers['content-type']).toBe('application/json')
    expect(headers['webhook-id']).toBe(eventId)
    const timestamp = headers['webhook-timestamp'] ?? ''
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60)
    expect(headers['webhook-signature']).toBe(expectedSignature(sub.secret, eventId, timestamp, request.body))
    const verified = new Webhook(sub.secret).verify(request.body, headers)
    expect(verified).toEqual({
      type: 'batch.uploaded',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: {
        batch_id: batch.id,
        stream_id: '7',
        status: 'uploaded',
        error_count: 0,
        stages: { upload: { status: 'success', successCount: 2, errorCount: 0, completedAt: '2025-01-01T00:00:00+00:00' }, processing: null },
        links: { batch: `/streams/7/batches/${batch.id}`, stream: '/streams/7' },
      },
    })
    // A body changed on the way is refused.
    expect(() => new Webhook(sub.secret).verify(request.body.replace('uploaded', 'processed'), headers)).toThrow()
    const [delivery] = await eventually(async () => {
      const found = await deliveries(c, sub.id)
      return found[0]?.status === 'delivered' ? found : undefined
    }, 'the delivered state')
    expect(delivery).toMatchObject({ event_id: eventId, event_type: 'batch.uploaded', attempts: 1, last_response_code: 200, next_attempt_at: null })
    const later = await deliverOneMore(c, sub.id)
    expect(r.received.map((received) => received.headers['webhook-id'])).toEqual([eventId, later])
  })

  it('send an event again after a 500, with the same webhook-id, until a 2xx', async () => {
    const c = await client(t)
    const r = await receiver()
    r.answers.push(500)
    const sub = await subscribe(c, r.url)
    const eventId = await recordUpload(t.db, c.account.accountId)
    const delivered = await deliveryIn(c, sub.id, 'delivered')
    expect(r.received.map((request) => request.headers['webhook-id'])).toEqual([eventId, eventId])
    expect(r.received[0]?.body).toBe(r.received[1]?.body)
    for (const request of r.received) expect(() => new Webhook(sub.secret).verify(request.body, headersOf(request))).not.toThrow()
    expect(delivered).toMatchObject({ attempts: 2, last_response_code: 200, last_error: null, response_body: 'ok' })
    // Another account cannot retry it, nor see it.
    const stranger = await client(t, 'Stranger')
    expect((await stranger.post(`/webhooks/${sub.id}/deliveries/${delivered.id}/retry`)).statusCode).toBe(404)
    expect((await stranger.get(`/webhooks/${sub.id}/deliveries`)).statusCode).toBe(404)
  })

  it('keep the first KiB of the answer only', async () => {
    const c = await client(t)
    const r = await receiver()
    r.fallback = { status: 200, body: 'é'.repeat(3000) }
    const sub = await subscribe(c, r.url)
    await recordUpload(t.db, c.account.accountId)
    const delivered = await deliveryIn(c, sub.id, 'delivered')
    expect(Buffer.byteLength(delivered.response_body ?? '')).toBeLessThanOrEqual(1024)
    expect(delivered.response_body?.length).toBeGreaterThanOrEqual(500)
  })

  it('of a receiver that keeps failing end failed after the retry window, disable it after 7 failures in a row, and can be retried', async () => {
    const c = await client(t)
    const r = await receiver()
    r.fallback = 500
    const sub = await subscribe(c, r.url, { events: ['batch.uploaded'] })
    const first = await recordUpload(t.db, c.account.accountId)
    const failed = await deliveryIn(c, sub.id, 'failed')
    // Attempts after 0, ~0.3, ~0.9, ~2.1 and ~4.5 s; the next would fall after the 7.2 s window (a
    // busy machine may reach the fifth only after it: the delivery then fails unsent).
    expect(failed).toMatchObject({
      event_id: first,
      last_response_code: 500,
      last_error: expect.stringMatching(/^(HTTP 500 Internal Server Error|not delivered)/),
    })
    expect([4, 5]).toContain(failed.attempts)
    expect(failed.next_attempt_at).toBeNull()
    expect(r.received).toHaveLength(failed.attempts)
    expect(r.received.every((request) => request.headers['webhook-id'] === first)).toBe(true)
    expect(await webhook(c, sub.id)).toMatchObject({ active: true, consecutive_failures: failed.attempts })

    const second = await recordUpload(t.db, c.account.accountId)
    const disabled = await eventually(async () => {
      const found = await webhook(c, sub.id)
      return found.active === false ? found : undefined
    }, 'the webhook disabled')
    expect(disabled.disabled_reason).toMatch(
      /^Disabled after 7 failed delivery attempts in a row \(failing since .*; the last: HTTP 500 Internal Server Error\)/,
    )
    const retryWhileDisabled = await c.post(`/webhooks/${sub.id}/deliveries/${failed.id}/retry`)
    expect(retryWhileDisabled.statusCode).toBe(400)
    expect(retryWhileDisabled.json<{ message: string }>().message).toMatch(/is not active: activate it/)

    r.fallback = 200
    const put = await c.put(`/webhooks/${sub.id}`, { active: true })
    expect(put.statusCode, put.body).toBe(200)
    expect(await webhook(c, sub.id)).toMatchObject({ active: true, consecutive_failures: 0, disabled_reason: null, disabled_at: null })
    // The pending one goes on where it stopped; the failed one goes again when asked.
    const resumed = await eventually(
      async () => (await deliveries(c, sub.id)).find((d) => d.event_id === second && d.status === 'delivered'),
      'the resumed one',
    )
    expect(resumed.attempts).toBeGreaterThanOrEqual(3)
    const retried = await c.post(`/webhooks/${sub.id}/deliveries/${failed.id}/retry`)
    expect(retried.statusCode, retried.body).toBe(200)
    expect(retried.json<{ Deliveries: DeliveryJson[] }>().Deliveries[0]).toMatchObject({ id: failed.id, status: 'pending' })
    const redone = await eventually(async () => (await deliveries(c, sub.id)).find((d) => d.id === failed.id && d.status === 'delivered'), 'the retried one')
    expect(redone).toMatchObject({ attempts: failed.attempts + 1, last_response_code: 200, last_error: null })
    expect(r.received.at(-1)?.headers['webhook-id']).toBe(first)
  })

  it('are signed with both secrets for 24 hours after a rotation, so the old secret still verifies', async () => {
    const c = await client(t)
    const r = await receiver()
    const sub = await subscribe(c, r.url)
    const rotation = await c.post(`/webhooks/${sub.id}/rotate-secret`)
    expect(rotation.statusCode, rotation.body).toBe(200)
    const newSecret = rotation.json<{ Webhooks: Subscription[] }>().Webhooks[0]?.secret ?? ''
    const eventId = await recordUpload(t.db, c.account.accountId)
    const request = await eventually(async () => r.received[0], 'the delivery')
    const headers = headersOf(request)
    const timestamp = headers['webhook-timestamp'] ?? ''
    const signatures = (headers['webhook-signature'] ?? '').split(' ')
    expect(signatures).toEqual([
      expectedSignature(newSecret, eventId, timestamp, request.body),
      expectedSignature(sub.secret, eventId, timestamp, request.body),
    ])
    expect(() => new Webhook(sub.secret).verify(request.body, headers)).not.toThrow()
    expect(() => new Webhook(newSecret).verify(request.body, headers)).not.toThrow()
  })

  it('go only to the active subscriptions of the account that take the event type', async () => {
    const c = await client(t)
    const r = await receiver()
    await subscribe(c, r.url, { events: ['run.failed'] })
    await subscribe(c, r.url, { active: false })
    const taker = await subscribe(c, `${r.url}?taker`, { events: ['batch.uploaded', 'batch.processed'] })
    const other = await client(t, 'Other account')
    const otherReceiver = await receiver()
    await subscribe(other, otherReceiver.url)
    const recorded = await inTransaction(t.db, (tx) =>
      recordEvent(tx, c.account.accountId, 'batch.uploaded', batchUploadedData(uploadedBatch(c.account.accountId))),
    )
    expect(recorded.deliveries).toBe(1)
    await deliveryIn(c, taker.id, 'delivered')
    expect(r.received.map((request) => request.path)).toEqual(['/hooks?taker'])
    expect(otherReceiver.received).toEqual([])
    // An account without subscriptions stores nothing.
    const lonely = await client(t, 'No webhooks')
    const nothing = await inTransaction(t.db, (tx) =>
      recordEvent(tx, lonely.account.accountId, 'batch.uploaded', batchUploadedData(uploadedBatch(lonely.account.accountId))),
    )
    expect(nothing.deliveries).toBe(0)
    expect(await t.db.selectFrom('webhook_event').select('id').where('account_id', '=', lonely.account.accountId).execute()).toEqual([])
  })

  it('are never made for an event recorded in a transaction that rolled back', async () => {
    const c = await client(t)
    const r = await receiver()
    const sub = await subscribe(c, r.url)
    let rolledBack = ''
    await expect(
      inTransaction(t.db, async (tx) => {
        rolledBack = (await recordEvent(tx, c.account.accountId, 'batch.uploaded', batchUploadedData(uploadedBatch(c.account.accountId)))).id
        throw new Error('the upload failed after the event was recorded')
      }),
    ).rejects.toThrow('the upload failed')
    // An event committed after it arrives; the rolled-back one, due before it, never does.
    const committed = await deliverOneMore(c, sub.id)
    expect(r.received.map((request) => request.headers['webhook-id'])).toEqual([committed])
    expect((await deliveries(c, sub.id)).map((d) => d.event_id)).toEqual([committed])
    expect(await t.db.selectFrom('webhook_event').select('id').where('id', '=', rolledBack).execute()).toEqual([])
  })

  it("of an account whose receiver hangs do not delay another account's", async () => {
    const slow = await client(t, 'Slow receiver')
    const timeline: TimelineEntry[] = []
    const hanging = await receiver(timeline)
    hanging.fallback = 'hang'
    const slowSub = await subscribe(slow, hanging.url)
    for (let i = 0; i < 4; i++) await recordUpload(t.db, slow.account.accountId)
    await eventually(async () => (hanging.received.length >= 2 ? true : undefined), 'the hanging attempts')
    const fast = await client(t, 'Fast receiver')
    const quick = await receiver(timeline)
    const fastSub = await subscribe(fast, quick.url)
    await recordUpload(t.db, fast.account.accountId)
    await deliveryIn(fast, fastSub.id, 'delivered')
    // Delivered while the slow account's attempts still hang, before WEBHOOK_TIMEOUT_SECONDS ends
    // them; and at most WEBHOOK_ACCOUNT_CONCURRENCY (2) attempts of the slow account at once.
    expect(timeline.map((entry) => `${entry.receiver === hanging ? 'slow' : 'fast'} ${entry.what}`)).toEqual(['slow request', 'slow request', 'fast request'])
    expect((await slow.del(`/webhooks/${slowSub.id}`)).statusCode).toBe(200)
  })

  it("of a failed run carry the codes of the run's site errors; a successful run is run.succeeded", async () => {
    const c = await client(t)
    const r = await receiver()
    await subscribe(c, r.url, { events: ['run.succeeded', 'run.failed'] })
    const site = await given.site({ account: c.account })
    const pid = crypto.randomUUID()
    const run: Run = {
      pid,
      account_id: c.account.accountId,
      site_id: site.id,
      action: 'import',
      target_id: null,
      trigger: 'schedule',
      status: 'failed',
      message: 'The main data source is empty',
      admitted_at: null,
      claimed_at: null,
      attempt: 1,
      heartbeat_at: null,
      created_at: new Date(),
      started_at: new Date(),
      finished_at: new Date(),
    }
    await inTransaction(t.db, async (tx) => {
      await addSiteError(tx.db, { accountId: run.account_id, siteId: site.id, pid, code: 1001, message: 'empty', data: {} })
      await addSiteError(tx.db, { accountId: run.account_id, siteId: site.id, pid, code: 1003, message: 'rows', data: {} })
      await recordRunEnded(tx, run)
    })
    await inTransaction(t.db, (tx) => recordRunEnded(tx, { ...run, status: 'success', message: 'Imported 3 products' }))
    await eventually(async () => (r.received.length >= 2 ? true : undefined), 'both events')
    const events = r.received
      .map((request) => JSON.parse(request.body) as { type: string; data: Record<string, unknown> })
      .sort((a, b) => a.type.localeCompare(b.type))
    expect(events.map((event) => event.type)).toEqual(['run.failed', 'run.succeeded'])
    expect(events[0]?.data).toMatchObject({ pid, site_id: site.id, status: 'failed', trigger: 'schedule', error_codes: [1001, 1003] })
    expect(events[1]?.data).toMatchObject({ pid, status: 'success', links: { status: `/platform/v2/sites/${site.id}/status/${pid}` } })
  })
})
