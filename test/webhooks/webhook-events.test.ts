import { describe, expect, it } from 'vitest'
import { setStreamStatus } from '../../src/streams/streams.js'
import { createChannel } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'
import type { ImportFixture } from '../helpers/factories.js'
import { useTestApp } from '../helpers/test-app.js'
import { subscribedSite, useReceivers, type Receiver, type SignedEvent } from './receiver.js'

// The events the product emits, end to end: a subscription made through the API, uploads, runs and
// exports through the API, and signed deliveries at a receiver on 127.0.0.1.
const t = useTestApp({ ALLOW_PRIVATE_DESTINATIONS: 'true', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_POLL_SECONDS: '0.2', RUN_POLL_SECONDS: '0.5' })

const { receiver: newReceiver } = useReceivers(t)
type Event = SignedEvent

/** A site whose account subscribes to every event at a receiver of its own; events verified with the secret. */
async function siteWithReceiver(): Promise<{ f: ImportFixture; receiver: Receiver; events: () => Event[] }> {
  const receiver = await newReceiver()
  const { f, received } = await subscribedSite(t, receiver, ['all'])
  return { f, receiver, events: received }
}

function ofType(events: Event[], type: string): Event[] {
  return events.filter((event) => event.type === type)
}

describe('events of uploads, runs and exports', () => {
  it('sends batch.uploaded, run.started, batch.processed with its counts, run.succeeded and export.finished with the feed URL, each verified', async () => {
    const { f, events } = await siteWithReceiver()
    const streamId = await f.createStream()
    await f.attach(streamId)
    const upload = await f.upload(streamId, [{ id: 'a', title: 'A' }, { id: 'b', title: 'B' }, { title: 'no id' }])
    expect(upload.statusCode, upload.body).toBe(202)
    const batchId = upload.json<{ data: { id: string } }>().data.id
    const uploaded = await eventually(async () => ofType(events(), 'batch.uploaded')[0], 'batch.uploaded')
    expect(uploaded.data).toMatchObject({ batch_id: batchId, stream_id: streamId })

    await createChannel(f, { format: 'csv' })
    const run = await f.run('all')
    expect(run.status).toBe('success')
    const all = await eventually(async () => (ofType(events(), 'export.finished').length > 0 ? events() : undefined), 'export.finished')
    expect(ofType(all, 'run.started').map((event) => event.data.pid)).toEqual([run.pid])
    const [processed] = ofType(all, 'batch.processed')
    expect(processed?.data).toMatchObject({ batch_id: batchId, pid: run.pid, site_id: f.site.id, status: 'processed' })
    expect((processed?.data.stages as { upload: { successCount: number; errorCount: number } }).upload).toMatchObject({ successCount: 2, errorCount: 1 })
    const succeeded = await eventually(async () => ofType(events(), 'run.succeeded')[0], 'run.succeeded')
    expect(succeeded.data).toMatchObject({ pid: run.pid, action: 'all', status: 'success' })
    const [exported] = ofType(all, 'export.finished')
    expect(exported?.data).toMatchObject({ pid: run.pid, counts: { now: 2, new: 2 } })
    const [url] = exported?.data.feed_urls as string[]
    expect(url).toMatch(/^\/feeds\/[^/]+\/.+/)
    expect((await t.request({ method: 'GET', url: url ?? '' })).statusCode).toBe(200)
    // Each event once, whatever the polling did.
    expect(new Set(events().map((event) => JSON.stringify(event))).size).toBe(events().length)
  })

  it('sends run.failed with the codes of the site errors, and stream.status_changed', async () => {
    const { f, events } = await siteWithReceiver()
    const streamId = await f.createStream()
    await f.attach(streamId)
    // A main data source whose stream has no products: the import fails with 1001.
    const run = await f.run('import')
    expect(run.status).toBe('failed')
    const failed = await eventually(async () => ofType(events(), 'run.failed')[0], 'run.failed')
    expect(failed.data).toMatchObject({ pid: run.pid, status: 'failed', error_codes: [1001] })

    await setStreamStatus(t.db, streamId, 'locked', new Date())
    const changed = await eventually(async () => ofType(events(), 'stream.status_changed')[0], 'stream.status_changed')
    expect(changed.data).toMatchObject({ stream_id: streamId, status: 'locked', previous_status: 'active' })
  })

  it('sends nothing for an upload that did not commit', async () => {
    const { f, receiver, events } = await siteWithReceiver()
    const streamId = await f.createStream()
    // An empty payload stores no batch: its transaction rolls back.
    expect((await f.upload(streamId, '')).statusCode).toBe(422)
    const good = await f.upload(streamId, [{ id: 'a' }])
    expect(good.statusCode, good.body).toBe(202)
    await eventually(async () => ofType(events(), 'batch.uploaded')[0], 'batch.uploaded')
    expect(receiver.received).toHaveLength(1)
  })
})
