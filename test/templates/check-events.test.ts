import { describe, expect, it } from 'vitest'
import { eventually } from '../helpers/eventually.js'
import { useTestApp } from '../helpers/test-app.js'
import { subscribedSite, useReceivers } from '../webhooks/receiver.js'
import { goodProduct, googleChannel } from './template-fixture.js'

// What a channel's checks announce (issue 24): export.finished carries the counts, and
// channel.readiness_changed fires when the readiness score crosses the channel's threshold, down
// and back up, and not while it stays on one side.
const t = useTestApp({ ALLOW_PRIVATE_DESTINATIONS: 'true', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_POLL_SECONDS: '0.2', RUN_POLL_SECONDS: '0.5' })

const { receiver: newReceiver } = useReceivers(t)

describe('events of a checked export', () => {
  it('export.finished carries the check counts; channel.readiness_changed fires on each crossing of the threshold', async () => {
    const { f, received: events } = await subscribedSite(t, await newReceiver(), ['export.finished', 'channel.readiness_changed'])
    const ofType = (type: string) => events().filter((event) => event.type === type)

    const stream = await f.createStream()
    await f.attach(stream)
    await f.upload(stream, [goodProduct('a'), goodProduct('b'), goodProduct('c'), goodProduct('d', { price: 'ten' })])
    const channel = await googleChannel(f, { readiness_threshold: 0.8 })
    // 3 of 4 without errors: 0.75, below 0.8 from the first export on.
    const first = await f.run('all')
    const finished = await eventually(async () => ofType('export.finished')[0], 'export.finished')
    expect(finished.data).toMatchObject({
      pid: first.pid,
      channel_id: channel.id,
      counts: { now: 3, new: 3, skipped: 1 },
      checks: { template: 'google_shopping', products_checked: 4, products_exported: 3, products_left_out: 1, products_with_errors: 1, readiness_score: 0.75 },
    })
    const down = await eventually(async () => ofType('channel.readiness_changed')[0], 'channel.readiness_changed')
    expect(down.data).toMatchObject({
      pid: first.pid,
      channel_id: channel.id,
      direction: 'below',
      readiness_score: 0.75,
      previous_readiness_score: null,
      readiness_threshold: 0.8,
    })

    // Still below: no event. Then fixed: above, one event.
    await f.upload(stream, [goodProduct('e', { title: '' })])
    const second = await f.run('all')
    await eventually(async () => ofType('export.finished').find((event) => event.data.pid === second.pid), 'the second export.finished')
    expect(ofType('channel.readiness_changed')).toHaveLength(1)
    await f.upload(stream, [goodProduct('d'), goodProduct('e')])
    const third = await f.run('all')
    const up = await eventually(async () => ofType('channel.readiness_changed').find((event) => event.data.pid === third.pid), 'the crossing up')
    expect(up.data).toMatchObject({ direction: 'above', readiness_score: 1, previous_readiness_score: 0.6 })
    // The second run's events were committed before the third run began: a crossing there would be here by now.
    expect(ofType('channel.readiness_changed').map((event) => event.data.pid)).toEqual([first.pid, third.pid])
  })
})
