import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { DAY_MS, expectApiError, ISO_SECONDS, type PageLinksJson, type StreamJson } from '../helpers/responses.js'
import { JSON_API, streamClient, type StreamClient, postStream, uniqueName } from '../helpers/clients.js'

const t = useTestApp(HIGH_LIMITS)
const API = { 'content-type': JSON_API }

const create = (c: StreamClient, document: object, headers = API) => c.send('POST', '/streams', document, headers)
const streamDoc = (attributes: Record<string, unknown>, extra: object = {}) => ({ data: { type: 'stream', attributes, ...extra } })
const streamOf = (response: { json: <T>() => T }) => response.json<{ data: StreamJson }>().data

async function listNames(c: StreamClient): Promise<string[]> {
  const response = await c.send('GET', '/streams')
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ data: StreamJson[] }>().data.map((s) => s.attributes.name)
}

describe('creating streams', () => {
  it('creates a chunked stream by default and answers 201 with the stream document', async () => {
    const c = await streamClient(t)
    const response = await create(c, streamDoc({ name: 'Main catalog' }))
    expect(response.statusCode, response.body).toBe(201)
    expect(response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/)
    const stream = streamOf(response)
    expect(stream).toMatchObject({
      type: 'stream',
      id: expect.stringMatching(/^\d+$/),
      attributes: { name: 'Main catalog', type: 'chunked' },
      relationships: { account: { data: { type: 'account', id: c.account.accountId } } },
    })
    expect(stream.attributes.createdAt).toMatch(ISO_SECONDS)
    expect(stream.attributes.updatedAt).toMatch(ISO_SECONDS)

    const read = await c.send('GET', `/streams/${stream.id}`)
    expect(read.statusCode, read.body).toBe(200)
    expect(read.headers['content-type']).toMatch(/^application\/vnd\.api\+json/)
    expect(streamOf(read)).toEqual(stream)
  })

  it('creates a referenced stream from an application/json body', async () => {
    const c = await streamClient(t)
    const response = await create(c, streamDoc({ name: 'Big feed', type: 'referenced' }), { 'content-type': 'application/json' })
    expect(response.statusCode, response.body).toBe(201)
    const stream = streamOf(response)
    expect(stream.attributes.type).toBe('referenced')
    expect(streamOf(await c.send('GET', `/streams/${stream.id}`)).attributes.type).toBe('referenced')
  })

  it('accepts an account relationship naming the caller, in data or at the top level', async () => {
    const c = await streamClient(t)
    const account = { account: { data: { type: 'account', id: c.account.accountId } } }
    const inData = await create(c, streamDoc({ name: 'In data' }, { relationships: account }))
    expect(inData.statusCode, inData.body).toBe(201)
    const topLevel = await create(c, { ...streamDoc({ name: 'Top level' }), relationships: account })
    expect(topLevel.statusCode, topLevel.body).toBe(201)
    expect(await listNames(c)).toEqual(['In data', 'Top level'])
  })

  it('answers 404 for an account relationship naming another account, and creates nothing', async () => {
    const c = await streamClient(t)
    const other = await streamClient(t, 'Other')
    for (const id of [other.account.accountId, '999999999']) {
      const response = await create(c, streamDoc({ name: 'Elsewhere' }, { relationships: { account: { data: { type: 'account', id } } } }))
      expectApiError(response, 404)
    }
    expect(await listNames(c)).toEqual([])
    expect(await listNames(other)).toEqual([])
  })

  it.each([
    ['2 characters', 'ab'],
    ['256 characters', 'x'.repeat(256)],
    ['no name', undefined],
    ['a number', 123],
  ])('refuses a name of %s with 422 naming the field', async (_case, name) => {
    const c = await streamClient(t)
    expectApiError(await create(c, streamDoc(name === undefined ? {} : { name })), 422, /name/)
    expect(await listNames(c)).toEqual([])
  })

  it('accepts names of 3 and of 255 characters', async () => {
    const c = await streamClient(t)
    await postStream(c, 'abc')
    await postStream(c, 'y'.repeat(255))
    expect(await listNames(c)).toEqual(['abc', 'y'.repeat(255)])
  })

  it('refuses an unknown type with 422', async () => {
    const c = await streamClient(t)
    expectApiError(await create(c, streamDoc({ name: 'Weird', type: 'streaming' })), 422, /type/)
    expect(await listNames(c)).toEqual([])
  })

  it('answers 409 for a duplicate name with meta.duplicate pointing at the existing stream', async () => {
    const c = await streamClient(t)
    const first = await postStream(c, 'Products')
    const error = expectApiError(await create(c, streamDoc({ name: 'Products' })), 409)
    expect(error.meta).toEqual({ duplicate: { type: 'stream', id: first.id, links: { self: `/streams/${first.id}` } } })
    expect(await listNames(c)).toEqual(['Products'])

    // Names are unique per account: another account may use the same one.
    const other = await streamClient(t, 'Other')
    await postStream(other, 'Products')
  })

  it('refuses the 101st live stream with 422 and accepts it again once one is deleted', async () => {
    const c = await streamClient(t)
    const ids: string[] = []
    for (let i = 1; i <= 100; i++) ids.push((await postStream(c, `bulk-${String(i).padStart(3, '0')}`)).id)
    const refused = expectApiError(await create(c, streamDoc({ name: 'one-too-many' })), 422)
    expect(refused.detail).toMatch(/100/)
    const list = await c.send('GET', '/streams')
    expect(list.json<{ meta: { total: number } }>().meta.total).toBe(100)

    expect((await c.send('DELETE', `/streams/${ids[0]}`)).statusCode).toBe(204)
    const accepted = await create(c, streamDoc({ name: 'one-too-many' }))
    expect(accepted.statusCode, accepted.body).toBe(201)
  })
})

describe('listing streams', () => {
  it('pages with page[offset] and page[limit], at most 10 a page, with string links', async () => {
    const c = await streamClient(t)
    const names = Array.from({ length: 25 }, (_, i) => `list-${String(i + 1).padStart(2, '0')}`)
    for (const name of names) await postStream(c, name)

    const first = await c.send('GET', '/streams')
    expect(first.statusCode, first.body).toBe(200)
    expect(first.headers['content-type']).toMatch(/^application\/vnd\.api\+json/)
    expect(first.json<{ data: StreamJson[] }>().data.map((s) => s.attributes.name)).toEqual(names.slice(0, 10))

    const middle = await c.send('GET', '/streams?page[offset]=10&page[limit]=50')
    expect(middle.statusCode, middle.body).toBe(200)
    const page = middle.json<{ data: StreamJson[]; links: PageLinksJson }>()
    expect(page.data.map((s) => s.attributes.name)).toEqual(names.slice(10, 20))
    for (const key of ['self', 'first', 'prev', 'next', 'last'] as const) expect(typeof page.links[key], key).toBe('string')

    // The links lead to the pages they name.
    const follow = async (link: string | undefined) => {
      expect(link).toBeDefined()
      const response = await c.send('GET', link ?? '')
      expect(response.statusCode, response.body).toBe(200)
      return response.json<{ data: StreamJson[]; links: PageLinksJson }>()
    }
    expect((await follow(page.links.self)).data.map((s) => s.attributes.name)).toEqual(names.slice(10, 20))
    expect((await follow(page.links.first)).data.map((s) => s.attributes.name)).toEqual(names.slice(0, 10))
    expect((await follow(page.links.prev)).data.map((s) => s.attributes.name)).toEqual(names.slice(0, 10))
    const next = await follow(page.links.next)
    expect(next.data.map((s) => s.attributes.name)).toEqual(names.slice(20))
    expect(next.links.next).toBeUndefined()
    expect((await follow(page.links.last)).data.map((s) => s.attributes.name)).toEqual(names.slice(20))

    const small = await c.send('GET', '/streams?page[offset]=3&page[limit]=2')
    expect(small.json<{ data: StreamJson[] }>().data.map((s) => s.attributes.name)).toEqual(names.slice(3, 5))
  })

  it('refuses a negative offset or a zero limit with a JSON:API error', async () => {
    const c = await streamClient(t)
    expectApiError(await c.send('GET', '/streams?page[offset]=-1'), 400)
    expectApiError(await c.send('GET', '/streams?page[limit]=0'), 400)
  })
})

describe('renaming streams', () => {
  it('renames with PATCH and answers 200 with the stream document', async () => {
    const c = await streamClient(t)
    const stream = await postStream(c, 'Old name')
    const response = await c.send('PATCH', `/streams/${stream.id}`, { data: { id: stream.id, type: 'stream', attributes: { name: 'New name' } } }, API)
    expect(response.statusCode, response.body).toBe(200)
    expect(response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/)
    expect(streamOf(response)).toMatchObject({ id: stream.id, attributes: { name: 'New name', type: 'chunked' } })
    expect(streamOf(await c.send('GET', `/streams/${stream.id}`)).attributes.name).toBe('New name')
    // The old name is free again at once (the stream was renamed, not deleted).
    await postStream(c, 'Old name')
  })

  it('refuses to change the type or move the stream to another account with 422, changing nothing', async () => {
    const c = await streamClient(t)
    const other = await streamClient(t, 'Other')
    const stream = await postStream(c, 'Fixed')
    const patch = (attributes: object, extra: object = {}) =>
      c.send('PATCH', `/streams/${stream.id}`, { data: { id: stream.id, type: 'stream', attributes, ...extra } }, API)

    expectApiError(await patch({ name: 'Changed', type: 'referenced' }), 422, /type/)
    const move = { relationships: { account: { data: { type: 'account', id: other.account.accountId } } } }
    expectApiError(await patch({ name: 'Changed' }, move), 422, /account/)
    expect(streamOf(await c.send('GET', `/streams/${stream.id}`)).attributes).toMatchObject({ name: 'Fixed', type: 'chunked' })
    expect(await listNames(other)).toEqual([])
  })

  it('refuses a rename to a taken or invalid name', async () => {
    const c = await streamClient(t)
    const taken = await postStream(c, 'Taken')
    const stream = await postStream(c, 'Mine')
    const error = expectApiError(
      await c.send('PATCH', `/streams/${stream.id}`, { data: { id: stream.id, type: 'stream', attributes: { name: 'Taken' } } }, API),
      409,
    )
    expect(error.meta).toMatchObject({ duplicate: { type: 'stream', id: taken.id } })
    expectApiError(await c.send('PATCH', `/streams/${stream.id}`, { data: { id: stream.id, type: 'stream', attributes: { name: 'no' } } }, API), 422, /name/)
    expect(await listNames(c)).toEqual(['Taken', 'Mine'])
  })
})

describe('deleting streams', () => {
  it('answers 204, also with a JSON:API Content-Type and no body, and the stream is gone everywhere', async () => {
    const c = await streamClient(t)
    const plain = await postStream(c)
    const withType = await postStream(c)
    const deleted = await c.send('DELETE', `/streams/${plain.id}`)
    expect(deleted.statusCode, deleted.body).toBe(204)
    expect(deleted.body).toBe('')
    const typed = await c.send('DELETE', `/streams/${withType.id}`, undefined, API)
    expect(typed.statusCode, typed.body).toBe(204)

    for (const id of [plain.id, withType.id]) {
      expectApiError(await c.send('GET', `/streams/${id}`), 404)
      expectApiError(await c.upload(id, '{"id":"1"}\n'), 404)
      expectApiError(await c.send('GET', `/streams/${id}/batches`), 404)
      expectApiError(await c.send('DELETE', `/streams/${id}`), 404)
      expectApiError(await c.send('PATCH', `/streams/${id}`, { data: { id, type: 'stream', attributes: { name: 'Back' } } }, API), 404)
    }
    expect(await listNames(c)).toEqual([])
  })

  it('hides the batches of a deleted stream', async () => {
    const c = await streamClient(t)
    const stream = await postStream(c)
    const upload = await c.upload(stream.id, '{"id":"1"}\n')
    expect(upload.statusCode, upload.body).toBe(202)
    const batchId = upload.json<{ data: { id: string } }>().data.id
    expect((await c.send('DELETE', `/streams/${stream.id}`)).statusCode).toBe(204)
    expectApiError(await c.send('GET', `/streams/${stream.id}/batches/${batchId}`), 404)
  })

  it('keeps the name reserved for 7 days after a delete, then frees it', async () => {
    const c = await streamClient(t)
    const name = uniqueName('reserved')
    const stream = await postStream(c, name)
    expect((await c.send('DELETE', `/streams/${stream.id}`)).statusCode).toBe(204)

    expectApiError(await create(c, streamDoc({ name })), 409)
    const other = await postStream(c)
    expectApiError(await c.send('PATCH', `/streams/${other.id}`, { data: { id: other.id, type: 'stream', attributes: { name } } }, API), 409)

    t.clock.advance(6 * DAY_MS)
    expectApiError(await create(c, streamDoc({ name })), 409)

    t.clock.advance(2 * DAY_MS)
    const again = await create(c, streamDoc({ name }))
    expect(again.statusCode, again.body).toBe(201)
    expect(streamOf(again).id).not.toBe(stream.id)
    expect((await listNames(c)).sort()).toEqual([name, other.attributes.name].sort())
  })
})
