import { describe, expect, it } from 'vitest'
import { client, type Client } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'
import { useTestApp } from '../helpers/test-app.js'
import { recordUpload, useReceivers, type Receiver } from './receiver.js'

// More hanging attempts than the process keeps open (WEBHOOK_MAX_OPEN 6): the one that has waited
// longest is ended early, as a failed attempt retried later, so the sockets stay bounded and another
// account's event still leaves. The timeout is far longer than the test.
const t = useTestApp({
  ALLOW_PRIVATE_DESTINATIONS: 'true',
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_POLL_SECONDS: '0.2',
  WEBHOOK_CONCURRENCY: '4',
  WEBHOOK_MAX_OPEN: '6',
  WEBHOOK_ACCOUNT_CONCURRENCY: '2',
  WEBHOOK_TIMEOUT_SECONDS: '60',
})

const { timeline, receiver } = useReceivers(t)

async function subscribe(c: Client, url: string): Promise<string> {
  const response = await c.post('/webhooks', { url, events: ['batch.uploaded'] })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ Webhooks: { id: string }[] }>().Webhooks[0]?.id ?? ''
}

interface DeliveryJson {
  status: string
  attempts: number
  last_error: string | null
  next_attempt_at: string | null
}

describe('webhook attempts beyond WEBHOOK_MAX_OPEN', () => {
  it('end the attempt that waited longest as a failed one, and let the next account through', async () => {
    const hanging: { c: Client; id: string; r: Receiver }[] = []
    for (let i = 0; i < 5; i++) {
      const c = await client(t, `Hanging ${i}`)
      const r = await receiver()
      r.fallback = 'hang'
      hanging.push({ c, id: await subscribe(c, r.url), r })
      for (let n = 0; n < 2; n++) await recordUpload(t.db, c.account.accountId)
    }
    const deliveries = async () =>
      (
        await Promise.all(hanging.map(async ({ c, id }) => (await c.get(`/webhooks/${id}/deliveries`)).json<{ Deliveries: DeliveryJson[] }>().Deliveries))
      ).flat()
    // Ten attempts that will not be answered, six open at most: some are ended early.
    const ended = await eventually(async () => {
      const found = (await deliveries()).filter((d) => d.last_error !== null)
      return found.length > 0 ? found : undefined
    }, 'an attempt ended early')
    for (const delivery of ended) {
      expect(delivery).toMatchObject({ status: 'pending', attempts: 1 })
      expect(delivery.last_error).toMatch(/^no response within [\d.]+ s \(ended early: 6 requests were open, and this one had waited longest\)$/)
      expect(delivery.next_attempt_at).not.toBeNull()
    }

    const healthy = await client(t, 'Healthy')
    const quick = await receiver()
    await subscribe(healthy, quick.url)
    await recordUpload(t.db, healthy.account.accountId)
    await eventually(async () => quick.received[0], "the healthy account's event")
    const closed = timeline.filter((entry) => entry.what === 'closed unanswered').length
    expect(closed).toBeGreaterThan(0)
    // What the hanging receivers hold stays within the bound.
    await eventually(async () => (hanging.reduce((sum, { r }) => sum + r.open, 0) <= 6 ? true : undefined), 'at most 6 open')
  })
})
