import { describe, expect, it } from 'vitest'
import { client, type Client } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'
import { importFixture } from '../helpers/factories.js'
import { useTestApp } from '../helpers/test-app.js'
import { recordUpload, useReceivers, type Receiver } from './receiver.js'

// Receivers that never answer, on more accounts than the process has delivery slots: another
// account's event still leaves at once. The timeout is far longer than the test, so every hanging
// attempt stays open throughout: the order of what the receivers saw is the proof, not a clock.
const t = useTestApp({
  ALLOW_PRIVATE_DESTINATIONS: 'true',
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_POLL_SECONDS: '0.2',
  WEBHOOK_CONCURRENCY: '4',
  WEBHOOK_ACCOUNT_CONCURRENCY: '2',
  WEBHOOK_TIMEOUT_SECONDS: '60',
})

const { timeline, receiver } = useReceivers(t)

async function subscribe(c: Client, url: string): Promise<void> {
  const response = await c.post('/webhooks', { url, events: ['batch.uploaded'] })
  expect(response.statusCode, response.body).toBe(201)
}

describe('webhook deliveries of accounts whose receivers hang', () => {
  it("hold back no other account's batch.uploaded, however many of them there are", async () => {
    // Five accounts, more than the 4 slots of the process, with two events each: enough hanging
    // attempts to fill every slot twice over.
    const hanging: Receiver[] = []
    for (let i = 0; i < 5; i++) {
      const c = await client(t, `Hanging ${i}`)
      const r = await receiver()
      r.fallback = 'hang'
      await subscribe(c, r.url)
      hanging.push(r)
      for (let n = 0; n < 2; n++) await recordUpload(t.db, c.account.accountId)
    }
    const sent = () => hanging.reduce((sum, r) => sum + r.received.length, 0)
    // Every slot of the process is held by an attempt that will not be answered.
    await eventually(async () => (sent() >= 4 ? true : undefined), 'hanging attempts in all 4 slots')

    // A sixth account uploads a batch through the stream interface.
    const f = await importFixture(t, {}, await client(t, 'Healthy'))
    const quick = await receiver()
    await subscribe(f.c, quick.url)
    const stream = await f.createStream()
    const upload = await f.upload(stream, [{ id: 'A', title: 'Shirt' }])
    expect(upload.statusCode, upload.body).toBe(202)
    const batchId = upload.json<{ data: { id: string } }>().data.id
    const request = await eventually(async () => quick.received[0], "the healthy account's event")
    expect(JSON.parse(request.body)).toMatchObject({ type: 'batch.uploaded', data: { batch_id: batchId } })

    // It arrived after at least 4 hanging attempts had been sent, and before any of them ended.
    const arrival = timeline.findIndex((entry) => entry.receiver === quick)
    const before = timeline.slice(0, arrival)
    expect(before.filter((entry) => hanging.includes(entry.receiver) && entry.what === 'request').length).toBeGreaterThanOrEqual(4)
    expect(before.filter((entry) => entry.what === 'closed unanswered')).toEqual([])
    // No account has more than WEBHOOK_ACCOUNT_CONCURRENCY (2) attempts open, and none of them was answered or closed.
    for (const r of hanging) {
      expect(r.received.length).toBeLessThanOrEqual(2)
      expect(r.open).toBe(r.received.length)
    }
  })
})
