import { describe, expect, it } from 'vitest'
import { client, createChannel, download, history, readChannel } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { expectError, feedPaths, type ChannelJson, type HoldJson } from '../helpers/responses.js'
import { useTestApp } from '../helpers/test-app.js'
import { goodProduct, googleChannel } from '../templates/template-fixture.js'
import { subscribedSite, useReceivers } from '../webhooks/receiver.js'

// Safety stops (issue 31): an export that would drop most of the delivered feed, or whose template
// would leave out most of what it checked, is held; the feed keeps serving the last delivered file
// byte for byte, and a release publishes the held export as it was computed.

const t = useTestApp({ ALLOW_PRIVATE_DESTINATIONS: 'true', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_POLL_SECONDS: '0.2', RUN_POLL_SECONDS: '0.5' })
const { receiver } = useReceivers(t)

const ids = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `P${String(from + i).padStart(4, '0')}`)
const rows = (count: number, from = 0) => ids(count, from).map((id) => ({ id, title: `Shirt ${id}`, price: '19.99' }))

/** A site with `count` products and a CSV channel of them with a full file and a `new` delta file, exported once. */
async function exportedSite(f: ImportFixture, count: number, settings: Record<string, unknown> = {}): Promise<{ stream: string; channel: ChannelJson }> {
  const stream = await f.createStream()
  await f.attach(stream)
  expect((await f.upload(stream, rows(count))).statusCode).toBe(202)
  const filenames = [
    { type: null, filename: 'feed.csv' },
    { type: 'new', filename: 'new.csv' },
  ]
  const channel = await createChannel(f, { name: 'Shop DE', export_name: 'generic', format: 'csv', filenames, ...settings })
  const first = await f.run('all')
  expect(first.status, first.message).toBe('success')
  return { stream, channel }
}

/** The channel's files as served: body and ETag of each. */
async function served(f: ImportFixture, channelId: string): Promise<{ body: string; etag: string }[]> {
  const files = []
  for (const path of feedPaths(await readChannel(f, channelId))) {
    const response = await download(t, path)
    expect(response.statusCode, path).toBe(200)
    files.push({ body: response.body, etag: String(response.headers.etag) })
  }
  return files
}

const lines = (csv: string) => csv.split('\n').filter((line) => line !== '').length - 1
const release = (f: ImportFixture, channelId: string, body?: object) => f.c.post(`/sites/${f.site.id}/channels/${channelId}/release`, body ?? {})

describe('a drop below the delivered feed', () => {
  it('is held: the feed, its ETag and its delta file stay; the run, the channel, the history, a site error and export.held say why', async () => {
    const { f, received } = await subscribedSite(t, await receiver(), ['export.held', 'export.finished'])
    const { stream, channel } = await exportedSite(f, 200)
    const before = await served(f, channel.id)
    expect((await f.deleteProducts(stream, ids(150))).statusCode).toBe(202)
    const run = await f.run('all')
    // Existing clients see a successful run; its message names the held channel and why.
    expect(run.status).toBe('success')
    expect(run.message).toContain(`Channel ${channel.id} (Shop DE) held: its file would hold 50 products instead of the 200 delivered, a drop of 75%`)
    expect(run.message).toContain(`/platform/v2/sites/${f.site.id}/channels/${channel.id}/release`)

    const held = await readChannel(f, channel.id)
    expect(held.export_status).toBe('held')
    expect(held.hold).toMatchObject<Partial<HoldJson>>({
      pid: run.pid,
      reason: 'drop',
      products: 50,
      products_previous: 200,
      threshold: 0.5,
      min_products: 100,
    })
    expect(await served(f, channel.id)).toEqual(before)
    expect((await history(f, channel.id))[0]).toMatchObject({
      pid: run.pid,
      process_status: 'held',
      product_count: '50',
      product_count_previous: '200',
      product_count_deleted: '150',
    })
    const errors = (await f.errors(run.pid)).filter((e) => e.error === '2010')
    expect(errors.map((e) => [e.type, e.classification])).toEqual([['Warning', 'high']])
    expect(JSON.parse(errors[0]?.data ?? '{}')).toMatchObject({ channel_id: channel.id, reason: 'drop', products: 50, products_previous: 200 })
    const event = await eventually(async () => received().find((e) => e.type === 'export.held'), 'export.held')
    expect(event.data).toMatchObject({ pid: run.pid, channel_id: channel.id, reason: 'drop', products: 50, products_previous: 200, threshold: 0.5 })
    expect(received().filter((e) => e.type === 'export.finished' && e.data.pid === run.pid)).toEqual([])
  })

  it('is released as computed: the feed then holds the held export, export.finished follows, and the next export compares against it', async () => {
    const { f, received } = await subscribedSite(t, await receiver(), ['export.finished'])
    const { stream, channel } = await exportedSite(f, 200)
    const [before] = await served(f, channel.id)
    expect((await f.deleteProducts(stream, ids(150))).statusCode).toBe(202)
    const held = await f.run('all')
    expect(expectError(await release(f, channel.id, { pid: '00000000-0000-4000-8000-000000000000' }), 409)).toMatch(/is of run/)

    const response = await release(f, channel.id, { pid: held.pid })
    expect(response.statusCode, response.body).toBe(200)
    const released = response.json<{ Channels: ChannelJson[] }>().Channels[0]
    expect(released).toMatchObject({ export_status: 'published', hold: null })
    const [full, delta] = await served(f, channel.id)
    expect(lines(full?.body ?? '')).toBe(50)
    expect(full?.etag).not.toBe(before?.etag)
    expect(lines(delta?.body ?? '')).toBe(0)
    expect((await history(f, channel.id))[0]).toMatchObject({ pid: held.pid, process_status: 'success', product_count: '50', product_count_previous: '200' })
    const finished = await eventually(async () => received().find((e) => e.type === 'export.finished' && e.data.pid === held.pid), 'export.finished')
    expect(finished.data).toMatchObject({ message: 'Exported 50 of 50 products through Shop DE', counts: { now: 50, previous: 200, deleted: 150 } })
    expectError(await release(f, channel.id), 409, /has no held export/)
    // The activity log says who held it (the platform) and who released it (this credential), once each.
    const log = await f.c.get(`/activity?target_type=channel&target_id=${channel.id}&action=export.*`)
    const entries = log.json<{ Activity: { action: string; actor: { type: string }; changes: Record<string, unknown> }[] }>().Activity
    expect(entries.map((e) => [e.action, e.actor.type])).toEqual([
      ['export.released', 'platform_credential'],
      ['export.held', 'system'],
    ])
    expect(entries[0]?.changes.products_published).toEqual([null, 50])

    expect((await f.upload(stream, rows(10, 1000))).statusCode).toBe(202)
    const next = await f.run('all')
    expect(next.message).toBe('Imported 60 products; Exported 60 of 60 products through Shop DE')
    expect((await history(f, channel.id))[0]).toMatchObject({ process_status: 'success', product_count_previous: '50', product_count_new: '10' })
  })

  it('cannot be released once the site was imported again (409: export again), and a later export that passes ends the hold', async () => {
    const f = await importFixture(t)
    const { stream, channel } = await exportedSite(f, 200)
    expect((await f.deleteProducts(stream, ids(150))).statusCode).toBe(202)
    await f.run('all')
    expect((await readChannel(f, channel.id)).export_status).toBe('held')
    expect((await f.run('import')).status).toBe('success')
    expectError(await release(f, channel.id), 409, /the site's import stage was built again since\. Export the channel again/)
    expect((await readChannel(f, channel.id)).export_status).toBe('held')

    expect((await f.upload(stream, rows(150))).statusCode).toBe(202)
    const passing = await f.run('all')
    expect(passing.message).toBe('Imported 200 products; Exported 200 of 200 products through Shop DE')
    expect(await readChannel(f, channel.id)).toMatchObject({ export_status: 'published', hold: null })
    expect(lines((await served(f, channel.id))[0]?.body ?? '')).toBe(200)
  })

  it('pushes nothing to an http destination: it gets the first export and the next one that passes, never the held one', async () => {
    const f = await importFixture(t)
    const destination = await receiver()
    const destinations = [{ type: 'feed' }, { type: 'http', url: destination.url }]
    const { stream } = await exportedSite(f, 200, { destinations })
    await eventually(async () => (destination.received.length === 2 ? true : undefined), 'the first export pushed')
    expect((await f.deleteProducts(stream, ids(150))).statusCode).toBe(202)
    expect((await f.run('all')).message).toContain('held')
    expect((await f.upload(stream, rows(150))).statusCode).toBe(202)
    expect((await f.run('all')).message).toBe(
      "Imported 200 products; Exported 200 of 200 products through Shop DE; 2 files queued for delivery to the channels' destinations",
    )
    await eventually(async () => (destination.received.length === 4 ? true : undefined), 'the passing export pushed')
    // Each export pushes its full file and its `new` file: the full files hold 200 products both times, never the held 50.
    const full = destination.received.filter((request) => String(request.headers['content-disposition']).includes('feed.csv'))
    expect(full.map((request) => lines(request.body))).toEqual([200, 200])
  })

  it('is published below safety_min_products, and when safety_max_drop is turned off', async () => {
    const f = await importFixture(t)
    const small = await exportedSite(f, 60)
    expect((await f.deleteProducts(small.stream, ids(55))).statusCode).toBe(202)
    expect((await f.run('all')).status).toBe('success')
    expect(await readChannel(f, small.channel.id)).toMatchObject({ export_status: 'published', hold: null })
    expect(lines((await served(f, small.channel.id))[0]?.body ?? '')).toBe(5)

    const g = await importFixture(t)
    const off = await exportedSite(g, 200, { safety_max_drop: '' })
    expect((await readChannel(g, off.channel.id)).safety_max_drop).toBeNull()
    expect((await g.deleteProducts(off.stream, ids(190))).statusCode).toBe(202)
    await g.run('all')
    expect(await readChannel(g, off.channel.id)).toMatchObject({ export_status: 'published', hold: null })
    expect(lines((await served(g, off.channel.id))[0]?.body ?? '')).toBe(10)
  })
})

describe('a template leaving out most of what it checked', () => {
  it('holds a first export, which then serves nothing; a run with the stop off publishes it', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    const products = ids(200).map((id, i) => goodProduct(id, i < 130 ? { price: 'ten' } : {}))
    expect((await f.upload(stream, products)).statusCode).toBe(202)
    const channel = await googleChannel(f, { name: 'Google DE' })
    const run = await f.run('all')
    expect(run.status).toBe('success')
    expect(run.message).toContain('held: its template would leave out 130 of the 200 products it checked, 65% (safety_max_left_out 50%)')
    const held = await readChannel(f, channel.id)
    expect(held).toMatchObject({ export_status: 'held', hold: { reason: 'left_out', products: 70, products_previous: null, products_left_out: 130 } })
    expect(feedPaths(held)).toEqual([])

    const changed = await f.c.put(`/sites/${f.site.id}/channels/${channel.id}`, { safety_max_left_out: '' })
    expect(changed.statusCode, changed.body).toBe(200)
    const again = await f.run('channel', { id: Number(channel.id) })
    expect(again.message).toBe('Exported 70 of 200 products through Google DE; 130 left out by its template')
    expect(await readChannel(f, channel.id)).toMatchObject({ export_status: 'published', hold: null })
  })

  it('says in the run message and export.finished what each channel left out, without holding below the share', async () => {
    const { f, received } = await subscribedSite(t, await receiver(), ['export.finished'])
    const stream = await f.createStream()
    await f.attach(stream)
    await f.upload(
      stream,
      ids(50).map((id, i) => goodProduct(id, i < 37 ? { availability: 'soon' } : {})),
    )
    await googleChannel(f, { name: 'Google DE' })
    const run = await f.run('all')
    // 50 checked is below safety_min_products: the share is not held.
    expect(run.message).toBe('Imported 50 products; Exported 13 of 50 products through Google DE; 37 left out by its template')
    const finished = await eventually(async () => received().find((e) => e.type === 'export.finished'), 'export.finished')
    expect(finished.data.message).toBe('Exported 13 of 50 products through Google DE; 37 left out by its template')
  })
})

describe('safety settings', () => {
  it('default to 0.5, 0.5 and 100, turn off with "", and refuse what they cannot be with a 400 naming the field', async () => {
    const f = await importFixture(t)
    const channel = await createChannel(f, { export_name: 'generic', format: 'csv' })
    expect(channel).toMatchObject({ safety_max_drop: 0.5, safety_max_left_out: 0.5, safety_min_products: 100, export_status: 'not_exported', hold: null })
    const put = (body: object) => f.c.put(`/sites/${f.site.id}/channels/${channel.id}`, body)
    for (const [field, value] of [
      ['safety_max_drop', 1.5],
      ['safety_max_drop', '-0.1'],
      ['safety_max_drop', 'half'],
      ['safety_max_left_out', 2],
      ['safety_max_left_out', '0x1'],
      ['safety_min_products', -1],
      ['safety_min_products', 2.5],
      ['safety_min_products', '1e3'],
      ['safety_min_products', 10_000_000_000],
    ] as const) {
      expectError(await put({ [field]: value }), 400, new RegExp(`^${field}: `))
    }
    const updated = await put({ safety_max_drop: '0.9', safety_max_left_out: '', safety_min_products: '' })
    expect(updated.statusCode, updated.body).toBe(200)
    expect(updated.json<{ Channels: ChannelJson[] }>().Channels[0]).toMatchObject({
      safety_max_drop: 0.9,
      safety_max_left_out: null,
      safety_min_products: null,
    })
    // null means "not given": the settings stay.
    const kept = await put({ safety_max_drop: null, name: 'Renamed' })
    expect(kept.json<{ Channels: ChannelJson[] }>().Channels[0]).toMatchObject({ safety_max_drop: 0.9, safety_max_left_out: null })
  })

  it("answers 404 for a release of another account's channel, and 409 for a channel that holds nothing", async () => {
    const f = await importFixture(t)
    const channel = await createChannel(f, { export_name: 'generic', format: 'csv' })
    expectError(await release(f, channel.id), 409, /has no held export/)
    const other = await importFixture(t, {}, await client(t))
    expectError(await other.c.post(`/sites/${f.site.id}/channels/${channel.id}/release`, {}), 404)
    expectError(await other.c.post(`/sites/${other.site.id}/channels/${channel.id}/release`, {}), 404)
  })
})
