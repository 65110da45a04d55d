import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { PostgresRateLimitStore } from '../../src/http/postgres-rate-limit.js'
import { PostgresWindowCounters } from '../../src/db/window-counters.js'
import { ndjson, NDJSON, postStream, streamClient } from '../helpers/clients.js'
import { bearerSpellings, xAuthTokenSpellings } from '../helpers/credential-spellings.js'
import { eventually } from '../helpers/eventually.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { storedCounts } from '../stream-api/stored-rows.js'

// Issue 14: the rate-limit counters in Postgres (as on a DATABASE_URL), so that every server process
// on the database counts together. A second app on the same database stands for a second process.
const t = useTestApp({ ...HIGH_LIMITS, RATE_LIMIT_PRODUCTS: '30', PLATFORM_RATE_LIMIT: '3' }, { sharedRateLimits: true })
// Every request of a test falls in one one-second window, whatever the machine's speed.
const NOW = new Date('2030-01-01T00:00:00.250Z')

let second: FastifyInstance
beforeAll(async () => {
  second = await buildApp({
    db: t.db,
    config: t.config,
    logger: false,
    clock: t.clock.now,
    rateLimits: new PostgresRateLimitStore(t.db),
    counters: new PostgresWindowCounters(t.db),
  })
  await second.ready()
})
afterAll(async () => {
  await second?.close()
})
beforeEach(() => t.clock.set(NOW))

describe('rate limits shared through Postgres', () => {
  it('accepts exactly 30 of a burst of 40 uploads to one stream spread over two processes, and stores every accepted batch', async () => {
    const c = await streamClient(t)
    const stream = await postStream(c)
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? t.app : second).inject({
          method: 'POST',
          url: `/streams/${stream.id}/products`,
          headers: { ...c.account.bearer, ...NDJSON },
          payload: ndjson([{ id: `P${i}`, title: 'x' }]),
        }),
      ),
    )
    const codes = responses.map((response) => response.statusCode)
    expect(codes.filter((code) => code === 202)).toHaveLength(30)
    expect(codes.filter((code) => code === 429)).toHaveLength(10)
    for (const refused of responses.filter((response) => response.statusCode === 429)) {
      expect(refused.body).toBe('{"errors":[{"status":"429","title":"Too Many Requests"}]}')
      expect(refused.headers['retry-after']).toBe('1')
      expect(refused.headers['ratelimit-remaining']).toBe('0')
    }
    expect(await storedCounts(t, stream.id)).toMatchObject({ batches: 30, rows: 30 })
  })

  it('limits the platform interface per credential and endpoint with its own body and headers, on every process', async () => {
    const account = await t.account()
    const get = (app: FastifyInstance, url: string, headers = account.platform) => app.inject({ method: 'GET', url, headers })
    const first = await get(t.app, '/platform/v2/projects')
    expect(first.statusCode, first.body).toBe(200)
    expect([first.headers['x-ratelimit-limit'], first.headers['x-ratelimit-remaining']]).toEqual(['3', '2'])
    expect((await get(second, '/platform/v2/projects')).headers['x-ratelimit-remaining']).toBe('1')
    expect((await get(t.app, '/platform/v2/projects')).headers['x-ratelimit-remaining']).toBe('0')

    const refused = await get(second, '/platform/v2/projects')
    expect(refused.statusCode).toBe(429)
    expect(refused.json()).toEqual({ success: false, message: 'Too many attempts.' })
    expect(refused.headers['retry-after']).toBe('1')
    expect([refused.headers['x-ratelimit-limit'], refused.headers['x-ratelimit-remaining']]).toEqual(['3', '0'])

    // Another endpoint, and another credential, count on their own.
    expect((await get(t.app, '/platform/v2/sites')).statusCode).toBe(200)
    const other = await get(t.app, '/platform/v2/projects', (await t.account('Other')).platform)
    expect(other.statusCode).toBe(200)
    expect(other.headers['x-ratelimit-remaining']).toBe('2')
    // The next second starts a new window.
    t.clock.advance(1000)
    expect((await get(second, '/platform/v2/projects')).statusCode).toBe(200)
  })

  it('counts six spellings of one token on one products counter: exactly 30 of 36 uploads in a second, over two processes', async () => {
    const c = await streamClient(t)
    const stream = await postStream(c)
    const spellings = bearerSpellings(c.account.token)
    const responses = await Promise.all(
      Array.from({ length: 36 }, (_, i) =>
        (i % 2 === 0 ? t.app : second).inject({
          method: 'POST',
          url: `/streams/${stream.id}/products`,
          headers: { authorization: spellings[i % spellings.length], ...NDJSON },
          payload: ndjson([{ id: `P${i}`, title: 'x' }]),
        }),
      ),
    )
    const codes = responses.map((response) => response.statusCode)
    expect(codes.filter((code) => code === 202)).toHaveLength(30)
    const refused = responses.filter((response) => response.statusCode === 429)
    expect(refused).toHaveLength(6)
    for (const response of refused) {
      expect(response.headers['retry-after']).toBe('1')
      expect(response.headers['ratelimit-remaining']).toBe('0')
    }
    expect(await storedCounts(t, stream.id)).toMatchObject({ batches: 30, rows: 30 })
  })

  it('counts a HEAD with its GET on the stream interface', async () => {
    const c = await streamClient(t)
    const stream = await postStream(c)
    const url = `/streams/${stream.id}`
    const responses = []
    for (let i = 0; i < 6; i++)
      responses.push(await (i % 2 === 0 ? t.app : second).inject({ method: i % 3 === 0 ? 'HEAD' : 'GET', url, headers: c.account.bearer }))
    expect(responses.map((response) => response.headers['ratelimit-observed'])).toEqual(['1', '2', '3', '4', '5', '6'])
  })

  it('counts three spellings of one X-Auth-Token on one platform counter', async () => {
    const account = await t.account()
    const responses = []
    for (const [i, xAuthToken] of [...xAuthTokenSpellings(account.xAuthToken), ...xAuthTokenSpellings(account.xAuthToken)].entries()) {
      responses.push(await (i % 2 === 0 ? t.app : second).inject({ method: 'GET', url: '/platform/v2/projects', headers: { 'x-auth-token': xAuthToken } }))
    }
    expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 200, 429, 429, 429])
    expect(responses.map((response) => response.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0', '0', '0'])
    for (const refused of responses.slice(3)) {
      expect(refused.json()).toEqual({ success: false, message: 'Too many attempts.' })
      expect(refused.headers['retry-after']).toBe('1')
    }
  })

  it('counts a bearer token on the platform interface by the token, however it is spelled', async () => {
    const account = await t.account()
    const codes = []
    for (const authorization of bearerSpellings(account.token)) {
      codes.push((await t.app.inject({ method: 'GET', url: '/platform/v2/webhooks', headers: { authorization } })).statusCode)
    }
    expect(codes).toEqual([200, 200, 200, 429, 429, 429])
    // The account's X-Auth-Token is another credential with a counter of its own.
    expect((await t.app.inject({ method: 'GET', url: '/platform/v2/webhooks', headers: account.platform })).statusCode).toBe(200)
  })

  it('counts a HEAD with its GET on the platform interface', async () => {
    const account = await t.account()
    const send = (method: 'GET' | 'HEAD', app: FastifyInstance) => app.inject({ method, url: '/platform/v2/projects', headers: account.platform })
    const head = await send('HEAD', t.app)
    expect(head.statusCode, head.body).toBe(200)
    expect(head.headers['x-ratelimit-remaining']).toBe('2')
    expect((await send('GET', second)).headers['x-ratelimit-remaining']).toBe('1')
    expect((await send('HEAD', t.app)).headers['x-ratelimit-remaining']).toBe('0')
    expect((await send('GET', second)).statusCode).toBe(429)
    const refused = await send('HEAD', t.app)
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe('1')
  })

  it('sweeps finished windows', async () => {
    const store = new PostgresRateLimitStore(t.db)
    await store.hit('sweep-test', 5, new Date('2031-01-01T00:00:00Z'))
    const windows = () => t.db.selectFrom('rate_limit_window').select('window_start').where('key', '=', 'sweep-test').execute()
    expect(await windows()).toHaveLength(1)
    // Twenty seconds later the next hit's sweep removes the old window (it runs beside the request).
    await store.hit('sweep-test', 5, new Date('2031-01-01T00:00:20Z'))
    await eventually(async () => ((await windows()).length === 1 ? true : undefined), 'the old window to be swept')
    expect((await windows()).map((row) => Number(row.window_start))).toEqual([Date.parse('2031-01-01T00:00:20Z') / 1000])
  })
})
