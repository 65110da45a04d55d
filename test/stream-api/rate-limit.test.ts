import { beforeEach, describe, expect, it } from 'vitest'
import { createToken } from '../../src/accounts/accounts.js'
import { bearerSpellings } from '../helpers/credential-spellings.js'
import { useTestApp } from '../helpers/test-app.js'
import { JSON_API, NDJSON, streamClient, type Response, type StreamClient, postStream } from '../helpers/clients.js'
import { expectBatch } from '../helpers/responses.js'
import { storedCounts } from './stored-rows.js'

const t = useTestApp({ RATE_LIMIT_OTHER: '3', RATE_LIMIT_PRODUCTS: '2', RATE_LIMIT_BATCHES: '4' })
// Every request of a test falls in one one-second window, whatever the machine's speed.
const NOW = new Date('2030-01-01T00:00:00.250Z')
const RESET = String(Math.ceil(NOW.getTime() / 1000))
const TOO_MANY = '{"errors":[{"status":"429","title":"Too Many Requests"}]}'

beforeEach(() => t.clock.set(NOW))

function expectLimitHeaders(response: Response, limit: number, observed: number, reset = RESET) {
  expect(
    {
      limit: response.headers['ratelimit-limit'],
      observed: response.headers['ratelimit-observed'],
      remaining: response.headers['ratelimit-remaining'],
      reset: response.headers['ratelimit-reset'],
    },
    `${response.statusCode} ${response.body}`,
  ).toEqual({ limit: String(limit), observed: String(observed), remaining: String(Math.max(0, limit - observed)), reset })
}

function expect429(response: Response, limit: number, observed: number) {
  expect(response.statusCode, response.body).toBe(429)
  expect(response.body).toBe(TOO_MANY)
  expect(response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/)
  expect(response.headers['retry-after']).toBe('1')
  expectLimitHeaders(response, limit, observed)
}

/** A fresh account (so fresh counters) with `count` streams, created through POST /streams. */
async function withStreams(count: number): Promise<{ c: StreamClient; ids: string[] }> {
  const c = await streamClient(t)
  const ids: string[] = []
  for (let i = 0; i < count; i++) ids.push((await postStream(c)).id)
  return { c, ids }
}

describe('rate-limit headers', () => {
  it('are on every stream response, errors included', async () => {
    const { c, ids } = await withStreams(1)
    const id = ids[0] ?? ''
    expectLimitHeaders(await c.send('GET', '/streams'), 3, 1)
    expectLimitHeaders(await c.send('GET', `/streams/${id}`), 3, 1)
    const upload = await c.upload(id, '{"id":"1"}\n')
    expect(upload.statusCode).toBe(202)
    expectLimitHeaders(upload, 2, 1)
    expectLimitHeaders(await c.send('GET', `/streams/${id}/batches`), 4, 1)

    const notFound = await c.send('GET', '/streams/999999999')
    expect(notFound.statusCode).toBe(404)
    expectLimitHeaders(notFound, 3, 2)
    const noRoute = await c.send('GET', `/streams/${id}/no-such-thing`)
    expect(noRoute.statusCode).toBe(404)
    expectLimitHeaders(noRoute, 3, 1)
    const unauthorized = await t.request({ method: 'GET', url: '/streams', headers: { authorization: 'Bearer headers-test-token' } })
    expect(unauthorized.statusCode).toBe(401)
    expectLimitHeaders(unauthorized, 3, 1)
    const created = await c.send('POST', '/streams', { data: { type: 'stream', attributes: { name: 'Two' } } }, { 'content-type': JSON_API })
    expect(created.statusCode).toBe(201)
    expectLimitHeaders(created, 3, 2)
  })
})

describe('429 Too Many Requests', () => {
  it('refuses the 4th GET /streams in a window with the exact body and Retry-After', async () => {
    const { c, ids } = await withStreams(1)
    for (let i = 1; i <= 3; i++) {
      const response = await c.send('GET', '/streams')
      expect(response.statusCode).toBe(200)
      expectLimitHeaders(response, 3, i)
    }
    expect429(await c.send('GET', '/streams'), 3, 4)
    expect429(await c.send('GET', '/streams'), 3, 5)
    // Every other endpoint counts on its own.
    expect((await c.send('GET', `/streams/${ids[0]}`)).statusCode).toBe(200)
  })

  it('counts products per stream id: another stream has its own counter, and nothing is stored past the limit', async () => {
    const { c, ids } = await withStreams(2)
    const [a = '', b = ''] = ids
    expectBatch(await c.upload(a, '{"id":"1"}\n'))
    expectBatch(await c.upload(a, '{"id":"2"}\n', NDJSON, 'PUT'))
    expect429(await c.upload(a, '{"id":"3"}\n', NDJSON, 'PATCH'), 2, 3)
    expect429(await c.send('DELETE', `/streams/${a}/products/1`), 2, 4)
    expect429(await c.send('DELETE', `/streams/${a}/products?all=true`), 2, 5)

    const other = await c.upload(b, '{"id":"1"}\n')
    expect(other.statusCode).toBe(202)
    expectLimitHeaders(other, 2, 1)
    expect(await storedCounts(t, a)).toEqual({ batches: 2, rows: 2, payloadChunks: 0 })
  })

  it('counts batch reads per stream id', async () => {
    const { c, ids } = await withStreams(2)
    const [a = '', b = ''] = ids
    for (let i = 1; i <= 4; i++) expect((await c.send('GET', `/streams/${a}/batches`)).statusCode).toBe(200)
    expect429(await c.send('GET', `/streams/${a}/batches`), 4, 5)
    expect429(await c.send('GET', `/streams/${a}/batches/00000000-0000-4000-8000-000000000000`), 4, 6)
    const other = await c.send('GET', `/streams/${b}/batches`)
    expect(other.statusCode).toBe(200)
    expectLimitHeaders(other, 4, 1)
  })

  it('counts per token: another account, or another token of the same account, is not limited', async () => {
    const { c } = await withStreams(0)
    for (let i = 0; i < 3; i++) expect((await c.send('GET', '/streams')).statusCode).toBe(200)
    expect429(await c.send('GET', '/streams'), 3, 4)

    const other = await streamClient(t, 'Other')
    const theirs = await other.send('GET', '/streams')
    expect(theirs.statusCode).toBe(200)
    expectLimitHeaders(theirs, 3, 1)

    const second = await createToken(t.db, c.account.accountId, 'second')
    const mine = await t.request({ method: 'GET', url: '/streams', headers: { authorization: `Bearer ${second.token}` } })
    expect(mine.statusCode).toBe(200)
    expectLimitHeaders(mine, 3, 1)
  })

  it('limits guessing tokens too: bad tokens count by the caller address and get 429 once over the limit', async () => {
    // An address of its own: the 401 of the headers test above counted for 127.0.0.1 in this window.
    const guess = (i: number) =>
      t.request({ method: 'GET', url: '/streams', headers: { authorization: `Bearer guessed-token-${i}` }, remoteAddress: '203.0.113.30' })
    for (let i = 0; i < 3; i++) expect((await guess(i)).statusCode).toBe(401)
    expect429(await guess(3), 3, 4)
    expect429(await t.request({ method: 'GET', url: '/streams', remoteAddress: '203.0.113.30' }), 3, 5)
  })

  it('counts every spelling of one token on one counter: 3 of 36 requests in a second get through', async () => {
    const { c } = await withStreams(0)
    const spellings = bearerSpellings(c.account.token)
    const responses = []
    for (let i = 0; i < 36; i++) {
      responses.push(await t.request({ method: 'GET', url: '/streams', headers: { authorization: spellings[i % spellings.length] } }))
    }
    expect(responses.filter((response) => response.statusCode === 200)).toHaveLength(3)
    const refused = responses.filter((response) => response.statusCode === 429)
    expect(refused).toHaveLength(33)
    refused.forEach((response, i) => expect429(response, 3, 4 + i))
  })

  it('counts a HEAD with its GET', async () => {
    const { c, ids } = await withStreams(1)
    const head = (url: string) => t.request({ method: 'HEAD', url, headers: c.headers })
    expectLimitHeaders(await head('/streams'), 3, 1)
    expectLimitHeaders(await c.send('GET', '/streams'), 3, 2)
    expectLimitHeaders(await head('/streams'), 3, 3)
    const refused = await c.send('GET', '/streams')
    expect(refused.statusCode).toBe(429)
    expectLimitHeaders(refused, 3, 4)
    const refusedHead = await head('/streams')
    expect(refusedHead.statusCode).toBe(429)
    expect(refusedHead.headers['retry-after']).toBe('1')
    expectLimitHeaders(refusedHead, 3, 5)
    // Another endpoint keeps its own counter, HEAD or GET.
    expectLimitHeaders(await head(`/streams/${ids[0]}`), 3, 1)
    expectLimitHeaders(await c.send('GET', `/streams/${ids[0]}`), 3, 2)
  })

  it('opens a new window a second later', async () => {
    const { c } = await withStreams(0)
    for (let i = 0; i < 3; i++) expect((await c.send('GET', '/streams')).statusCode).toBe(200)
    expect429(await c.send('GET', '/streams'), 3, 4)

    t.clock.advance(1000)
    const next = await c.send('GET', '/streams')
    expect(next.statusCode, next.body).toBe(200)
    expectLimitHeaders(next, 3, 1, String(Number(RESET) + 1))
  })
})
