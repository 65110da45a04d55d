import { describe, expect, it } from 'vitest'
import { createToken, revokeToken } from '../../src/accounts/accounts.js'
import { factories } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { JSON_API, NDJSON, streamClient, type Headers, type Response } from '../helpers/clients.js'
import { expectApiError, type StreamJson } from '../helpers/responses.js'
import { storedCounts } from './stored-rows.js'

const t = useTestApp(HIGH_LIMITS)
const given = factories(t)
const API = { 'content-type': JSON_API }

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** Every stream endpoint, with a valid request for the given stream and batch. */
function endpoints(streamId: string, batchId: string): [Method, string, (string | object)?, Headers?][] {
  return [
    ['GET', '/streams'],
    ['POST', '/streams', { data: { type: 'stream', attributes: { name: 'Intruder' } } }, API],
    ['GET', `/streams/${streamId}`],
    ['PATCH', `/streams/${streamId}`, { data: { id: streamId, type: 'stream', attributes: { name: 'Renamed' } } }, API],
    ['DELETE', `/streams/${streamId}`],
    ['POST', `/streams/${streamId}/products`, '{"id":"1"}\n', NDJSON],
    ['PUT', `/streams/${streamId}/products`, '{"id":"1"}\n', NDJSON],
    ['PATCH', `/streams/${streamId}/products`, '{"id":"1"}\n', NDJSON],
    ['DELETE', `/streams/${streamId}/products`, '{"id":"1"}\n', NDJSON],
    ['DELETE', `/streams/${streamId}/products?all=true`],
    ['DELETE', `/streams/${streamId}/products/1`],
    ['GET', `/streams/${streamId}/batches`],
    ['GET', `/streams/${streamId}/batches/${batchId}`],
  ]
}

async function ownedStream() {
  const owner = await streamClient(t, 'Owner')
  const stream = await given.stream({ account: owner.account, name: 'Secret stream' })
  const upload = await owner.upload(stream.id, '{"id":"A1","name":"original"}\n')
  expect(upload.statusCode, upload.body).toBe(202)
  const batchId = upload.json<{ data: { id: string } }>().data.id
  return { owner, stream, batchId }
}

async function call(headers: Headers, [method, url, payload, extra]: [Method, string, (string | object)?, Headers?]): Promise<Response> {
  return t.request({ method, url, headers: { ...headers, ...extra }, ...(payload === undefined ? {} : { payload }) })
}

describe('authentication', () => {
  it.each([
    ['no credential', {}],
    ['an unknown bearer token', { authorization: 'Bearer not-a-real-token' }],
    ['a malformed Authorization header', { authorization: 'Token abc' }],
    ['an empty bearer', { authorization: 'Bearer ' }],
  ])('answers 401 with a JSON:API error on every endpoint for %s', async (_case, headers: Headers) => {
    const { owner, stream, batchId } = await ownedStream()
    for (const endpoint of endpoints(stream.id, batchId)) {
      const response = await call(headers, endpoint)
      expectApiError(response, 401)
      expect(response.body).not.toContain('Secret stream')
    }
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 1, rows: 1, payloadChunks: 0 })
    expect((await owner.send('GET', `/streams/${stream.id}`)).json<{ data: StreamJson }>().data.attributes.name).toBe('Secret stream')
  })

  it('does not accept the platform X-Auth-Token, alone or as a bearer', async () => {
    const { owner, stream, batchId } = await ownedStream()
    for (const headers of [owner.account.platform, { authorization: `Bearer ${owner.account.xAuthToken}` }]) {
      for (const endpoint of endpoints(stream.id, batchId)) expectApiError(await call(headers, endpoint), 401)
    }
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 1, rows: 1, payloadChunks: 0 })
  })

  it('accepts a second token of the account and refuses it once revoked', async () => {
    const { owner, stream } = await ownedStream()
    const token = await createToken(t.db, owner.account.accountId, 'ci')
    const headers = { authorization: `Bearer ${token.token}` }
    expect((await t.request({ method: 'GET', url: `/streams/${stream.id}`, headers })).statusCode).toBe(200)

    await revokeToken(t.db, token.id)
    expectApiError(await t.request({ method: 'GET', url: `/streams/${stream.id}`, headers }), 401)
    expectApiError(await t.request({ method: 'GET', url: '/streams', headers }), 401)
    expectApiError(await t.request({ method: 'POST', url: `/streams/${stream.id}/products`, headers: { ...headers, ...NDJSON }, payload: '{"id":"2"}\n' }), 401)
    // The account's other token still works.
    expect((await owner.send('GET', `/streams/${stream.id}`)).statusCode).toBe(200)
  })

  it('accepts the bearer scheme name in any case', async () => {
    const { owner, stream } = await ownedStream()
    const headers = { authorization: `bearer ${owner.account.token}` }
    expect((await t.request({ method: 'GET', url: `/streams/${stream.id}`, headers })).statusCode).toBe(200)
  })
})

describe('account isolation', () => {
  it("answers 404 for another account's stream on every stream endpoint and changes nothing", async () => {
    const { owner, stream, batchId } = await ownedStream()
    const stranger = await streamClient(t, 'Stranger')
    for (const endpoint of endpoints(stream.id, batchId)) {
      const [method, url] = endpoint
      if (url === '/streams') continue
      const response = await call(stranger.headers, endpoint)
      expectApiError(response, 404)
      expect(response.body, `${method} ${url}`).not.toContain('Secret stream')
    }
    const mine = await owner.send('GET', `/streams/${stream.id}`)
    expect(mine.json<{ data: StreamJson }>().data.attributes.name).toBe('Secret stream')
    const batches = await owner.batches(stream.id)
    expect(batches.map((b) => b.id)).toEqual([batchId])
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 1, rows: 1, payloadChunks: 0 })

    const list = await stranger.send('GET', '/streams')
    expect(list.json<{ data: StreamJson[] }>().data).toEqual([])
  })

  it("answers 404 for a batch id of another account's stream even under one's own stream", async () => {
    const { batchId } = await ownedStream()
    const stranger = await streamClient(t, 'Stranger')
    const own = await given.stream({ account: stranger.account })
    expectApiError(await stranger.send('GET', `/streams/${own.id}/batches/${batchId}`), 404)
  })

  it('answers 404 for ids that cannot exist', async () => {
    const c = await streamClient(t)
    for (const id of ['999999999', 'abc', '0', '-1', '1.5', '99999999999999999999']) {
      expectApiError(await c.send('GET', `/streams/${id}`), 404)
      expectApiError(await c.upload(id, '{"id":"1"}\n'), 404)
      expectApiError(await c.send('GET', `/streams/${id}/batches`), 404)
    }
  })
})

describe('response content type', () => {
  it('is application/vnd.api+json on documents and on errors', async () => {
    const { owner, stream, batchId } = await ownedStream()
    const responses = [
      await owner.send('GET', '/streams'),
      await owner.send('GET', `/streams/${stream.id}`),
      await owner.send('GET', `/streams/${stream.id}/batches`),
      await owner.send('GET', `/streams/${stream.id}/batches/${batchId}`),
      await owner.upload(stream.id, '{"id":"2"}\n'),
      await owner.send('GET', '/streams/999999999'),
      await owner.send('GET', `/streams/${stream.id}/nothing-here`),
      await t.request({ method: 'GET', url: '/streams' }),
    ]
    for (const response of responses) {
      expect(response.headers['content-type'], `${response.statusCode} ${response.body}`).toMatch(/^application\/vnd\.api\+json/)
      expect(() => response.json()).not.toThrow()
    }
  })
})
