import { describe, expect, it } from 'vitest'
import { client, createChannel, history } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { useReceivers, type Receiver } from '../webhooks/receiver.js'

// Destinations that never answer, on more accounts than the process has push slots: another
// account's push still leaves at once. The try limit and the run budget are far longer than the test,
// so every hanging push stays open throughout: the order of what the destinations saw is the proof.
const t = useTestApp({
  ...HIGH_LIMITS,
  RUN_POLL_SECONDS: '0.5',
  SCHEDULER_INTERVAL_SECONDS: '0',
  ALLOW_PRIVATE_DESTINATIONS: 'true',
  PUSH_CONCURRENCY: '2',
  PUSH_ACCOUNT_CONCURRENCY: '1',
  PUSH_TIMEOUT_SECONDS: '120',
  PUSH_BUDGET_SECONDS: '600',
})

const { timeline, receiver } = useReceivers(t)

/** An account whose site exports one file to `url` on its next run; returns the channel's id. */
async function exportingTo(f: ImportFixture, url: string): Promise<string> {
  const stream = await f.createStream()
  await f.attach(stream)
  await f.upload(stream, [{ id: 'A', title: 'Shirt' }])
  return (await createChannel(f, { format: 'csv', destinations: [{ type: 'http', url }] })).id
}

describe('pushes of accounts whose destinations hang', () => {
  it("hold back no other account's push, however many of them there are", { timeout: 60_000 }, async () => {
    // Three accounts, more than the 2 push slots of the process, each with a push that will hang.
    const hanging: Receiver[] = []
    for (let i = 0; i < 3; i++) {
      const f = await importFixture(t, {}, await client(t, `Hanging ${i}`))
      const r = await receiver()
      r.fallback = 'hang'
      hanging.push(r)
      await exportingTo(f, r.url)
      expect(await f.run('all')).toMatchObject({ status: 'success' })
    }
    const sent = () => hanging.reduce((sum, r) => sum + r.received.length, 0)
    // Every push slot of the process is held by a push that will not be answered.
    await eventually(async () => (sent() >= 2 ? true : undefined), 'hanging pushes in both slots')

    const f = await importFixture(t, {}, await client(t, 'Healthy'))
    const quick = await receiver()
    const channelId = await exportingTo(f, quick.url)
    expect(await f.run('all')).toMatchObject({ status: 'success' })
    const request = await eventually(async () => quick.received[0], "the healthy account's push")
    expect(request.body).toContain('Shirt')
    await eventually(async () => ((await history(f, channelId))[0]?.uploaded === '1' ? true : undefined), 'the delivered export')

    // It arrived after at least 2 hanging pushes had been sent, and before any of them ended.
    const arrival = timeline.findIndex((entry) => entry.receiver === quick)
    const before = timeline.slice(0, arrival)
    expect(before.filter((entry) => hanging.includes(entry.receiver) && entry.what === 'request').length).toBeGreaterThanOrEqual(2)
    expect(before.filter((entry) => entry.what === 'closed unanswered')).toEqual([])
    // One push per account at once (PUSH_ACCOUNT_CONCURRENCY), none of them answered or closed.
    for (const r of hanging) {
      expect(r.received.length).toBeLessThanOrEqual(1)
      expect(r.open).toBe(r.received.length)
    }
  })
})
