import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { setStreamStatus } from '../../src/streams/streams.js'
import { factories } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { NDJSON, streamClient, type StreamClient } from '../helpers/clients.js'
import { expectApiError, expectBatch, type BatchJson, type PageLinksJson } from '../helpers/responses.js'
import { storedCounts, storedRows } from './stored-rows.js'

const t = useTestApp(HIGH_LIMITS)
const given = factories(t)

async function batchKinds(batchIds: string[]) {
  const rows = await t.db.selectFrom('batch').select(['id', 'kind']).where('id', 'in', batchIds).execute()
  return Object.fromEntries(rows.map((r) => [r.id, r.kind]))
}

describe('product deletes', () => {
  it('DELETE /products with NDJSON ids answers 202 with a batch and records each id', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const batch = expectBatch(await c.send('DELETE', `/streams/${stream.id}/products`, '{"id":"A"}\n{"id":"B"}\n{"name":"no id"}\n', NDJSON))
    expect(batch.attributes).toMatchObject({ status: 'uploaded', errorCount: 1, stages: { processing: null } })
    expect(batch.attributes.stages.upload).toMatchObject({ status: 'warning', successCount: 2, errorCount: 1 })
    expect(batch.attributes.stages.upload.errors).toEqual([
      { message: 'Missing "id" attribute', occurrences: 1, example: { lineNumber: 3, value: '{"name":"no id"}' } },
    ])
    expect((await storedRows(t, stream.id)).map((r) => [r.product_id, r.data])).toEqual([
      ['A', null],
      ['B', null],
    ])
    expect(await batchKinds([batch.id])).toEqual({ [batch.id]: 'delete' })
  })

  it('DELETE /products?all=true with no body answers 202', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    expectBatch(await c.upload(stream.id, '{"id":"A"}\n'))
    const batch = expectBatch(await c.send('DELETE', `/streams/${stream.id}/products?all=true`))
    expect(batch.attributes).toMatchObject({ status: 'uploaded', errorCount: 0, stages: { processing: null } })
    expect(await batchKinds([batch.id])).toEqual({ [batch.id]: 'delete_all' })
    expect((await c.batches(stream.id)).map((b) => b.id)[0]).toBe(batch.id)
  })

  it('DELETE /products?all=true with a body is refused with 400 and deletes nothing', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    expectBatch(await c.upload(stream.id, '{"id":"A"}\n'))
    expectApiError(await c.send('DELETE', `/streams/${stream.id}/products?all=true`, '{"id":"A"}\n', NDJSON), 400)
    expect(await c.batches(stream.id)).toHaveLength(1)
  })

  it('DELETE /products/{productId} answers 202 and records that one id', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const one = expectBatch(await c.send('DELETE', `/streams/${stream.id}/products/SKU-1`))
    const encoded = expectBatch(await c.send('DELETE', `/streams/${stream.id}/products/${encodeURIComponent('a b/é')}`))
    expect(one.attributes).toMatchObject({ status: 'uploaded', stages: { processing: null } })
    expect((await storedRows(t, stream.id)).map((r) => [r.batch_id, r.product_id, r.data])).toEqual([
      [one.id, 'SKU-1', null],
      [encoded.id, 'a b/é', null],
    ])
    expect(await batchKinds([one.id])).toEqual({ [one.id]: 'delete' })
  })

  it('an NDJSON delete needs the NDJSON Content-Type and a body', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    expectApiError(await c.send('DELETE', `/streams/${stream.id}/products`, '{"id":"A"}\n', { 'content-type': 'text/plain' }), 415)
    expectBatch(await c.send('DELETE', `/streams/${stream.id}/products`, '', NDJSON), 422)
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 0, rows: 0, payloadChunks: 0 })
  })
})

describe('batches', () => {
  it('reads a batch by id as the upload answered it, with stages.processing null', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const uploaded = expectBatch(await c.upload(stream.id, '{"id":"1"}\n{}\n'))
    const response = await c.send('GET', `/streams/${stream.id}/batches/${uploaded.id}`)
    expect(response.statusCode, response.body).toBe(200)
    const read = response.json<{ data: BatchJson }>().data
    expect(read).toMatchObject({ type: 'batch', id: uploaded.id, attributes: uploaded.attributes, relationships: uploaded.relationships })
    expect(read.attributes.stages.processing).toBeNull()
  })

  it('lists batches newest first with paging links', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const ids: string[] = []
    for (let i = 0; i < 12; i++) ids.push(expectBatch(await c.upload(stream.id, `{"id":"${i}"}\n`)).id)
    const newestFirst = [...ids].reverse()

    const first = await c.send('GET', `/streams/${stream.id}/batches`)
    expect(first.statusCode, first.body).toBe(200)
    const page = first.json<{ data: BatchJson[]; links: PageLinksJson }>()
    expect(page.data.map((b) => b.id)).toEqual(newestFirst.slice(0, 10))
    expect(page.data.every((b) => b.attributes.stages.processing === null)).toBe(true)
    expect(page.links.prev).toBeUndefined()
    for (const key of ['self', 'first', 'next', 'last'] as const) expect(typeof page.links[key], key).toBe('string')

    const next = await c.send('GET', page.links.next ?? '')
    expect(next.statusCode, next.body).toBe(200)
    const second = next.json<{ data: BatchJson[]; links: PageLinksJson }>()
    expect(second.data.map((b) => b.id)).toEqual(newestFirst.slice(10))
    expect(second.links.next).toBeUndefined()
    expect(typeof second.links.prev).toBe('string')

    const wide = await c.send('GET', `/streams/${stream.id}/batches?page[offset]=1&page[limit]=50`)
    expect(wide.json<{ data: BatchJson[] }>().data.map((b) => b.id)).toEqual(newestFirst.slice(1, 11))
  })

  it('answers 404 for an unknown batch id, a malformed one, and one of another stream', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const other = await given.stream({ account: c.account })
    const batch = expectBatch(await c.upload(other.id, '{"id":"1"}\n'))
    for (const id of [randomUUID(), 'not-a-uuid', '1', batch.id]) {
      expectApiError(await c.send('GET', `/streams/${stream.id}/batches/${id}`), 404)
    }
  })
})

async function expectRefused(c: StreamClient, streamId: string, status: number) {
  for (const method of ['POST', 'PUT', 'PATCH'] as const) expectApiError(await c.upload(streamId, '{"id":"1"}\n', NDJSON, method), status)
  expectApiError(await c.send('DELETE', `/streams/${streamId}/products`, '{"id":"1"}\n', NDJSON), status)
  expectApiError(await c.send('DELETE', `/streams/${streamId}/products?all=true`), status)
  expectApiError(await c.send('DELETE', `/streams/${streamId}/products/1`), status)
}

describe('stream status (docs/interface.md section 3)', () => {
  it.each([
    ['disabled', 403],
    ['locked', 423],
    ['locked_upload', 423],
  ])('a %s stream refuses uploads and deletes with %i and stores nothing', async (status, code) => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    await setStreamStatus(t.db, stream.id, status, new Date())
    await expectRefused(c, stream.id, code)
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 0, rows: 0, payloadChunks: 0 })
    // The stream and its batches can still be read.
    expect((await c.send('GET', `/streams/${stream.id}`)).statusCode).toBe(200)
    expect(await c.batches(stream.id)).toEqual([])

    await setStreamStatus(t.db, stream.id, 'active', new Date())
    expectBatch(await c.upload(stream.id, '{"id":"1"}\n'))
  })

  it('a locked_processing stream still accepts uploads and deletes', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    await setStreamStatus(t.db, stream.id, 'locked_processing', new Date())
    expectBatch(await c.upload(stream.id, '{"id":"1"}\n'))
    expectBatch(await c.send('DELETE', `/streams/${stream.id}/products/1`))
    expect(await c.batches(stream.id)).toHaveLength(2)
  })

  it('a stream feeding a disabled site refuses uploads with 403 until the site is active again', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const unrelated = await given.stream({ account: c.account })
    const platform = (method: 'POST' | 'PUT', url: string, payload: object) =>
      t.request({ method, url: `/platform/v2${url}`, headers: c.account.platform, payload })
    const project = await platform('POST', '/projects', { name: 'Shop' })
    expect(project.statusCode, project.body).toBe(201)
    const projectId = project.json<{ Projects: { id: string }[] }>().Projects[0]?.id
    const site = await platform('POST', '/sites', { title: 'Shop site', project_id: projectId, status: 'disabled' })
    expect(site.statusCode, site.body).toBe(201)
    const siteId = site.json<{ Sites: { id: string; status: string }[] }>().Sites[0]?.id ?? ''
    await t.db.insertInto('data_source').values({ account_id: c.account.accountId, site_id: siteId, stream_id: stream.id, import_type: 1 }).execute()

    await expectRefused(c, stream.id, 403)
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 0, rows: 0, payloadChunks: 0 })
    expectBatch(await c.upload(unrelated.id, '{"id":"1"}\n'))

    const activated = await platform('PUT', `/sites/${siteId}`, { status: 'active' })
    expect(activated.statusCode, activated.body).toBe(200)
    expectBatch(await c.upload(stream.id, '{"id":"1"}\n'))
  })
})
