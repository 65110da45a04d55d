import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { useTestApp, type TestAccount } from '../helpers/test-app.js'

// Failed authentications count per caller address (request.ip) on both interfaces, and the address
// is the connection's own unless a configured proxy forwarded the request.

const LIMIT = 5
const t = useTestApp({ AUTH_FAILURES_PER_MINUTE: String(LIMIT) })
// 10 s into a minute: the window ends, and Retry-After points, 50 s later.
let minute = Date.UTC(2031, 0, 1, 0, 0, 0)
beforeEach(() => {
  minute += 60_000
  t.clock.set(new Date(minute + 10_000))
})

const ATTACKER = '198.51.100.10'
const BYSTANDER = '198.51.100.20'
const TOO_MANY_STREAM = {
  errors: [{ status: '429', title: 'Too Many Requests', detail: 'Too many failed authentications from this address; try again in 50 s' }],
}

let account: TestAccount
beforeAll(async () => {
  account = await t.account()
})

const platform = (headers: Record<string, string>, remoteAddress = ATTACKER, app?: FastifyInstance) =>
  (app ?? t.app).inject({ method: 'GET', url: '/platform/v2/projects', headers: { accept: 'application/json', ...headers }, remoteAddress })
const stream = (headers: Record<string, string>, remoteAddress = ATTACKER) => t.request({ method: 'GET', url: '/streams', headers, remoteAddress })
const wrongToken = (i: number) => ({ 'x-auth-token': `cp_guess${i}:secret${i}` })
const wrongBearer = (i: number) => ({ authorization: `Bearer cpat_guess${i}` })

describe('failed authentications per caller address', () => {
  it('platform: different wrong credentials from one address reach 429 with Retry-After; the valid one waits too', async () => {
    for (let i = 0; i < LIMIT; i++) expect((await platform(wrongToken(i))).statusCode).toBe(401)
    for (const headers of [wrongToken(LIMIT), {}, { 'x-auth-token': account.xAuthToken }]) {
      const refused = await platform(headers)
      expect(refused.statusCode, refused.body).toBe(429)
      expect(refused.headers['retry-after']).toBe('50')
      expect(refused.json()).toEqual({ success: false, message: 'Too many failed authentications from this address; try again in 50 s' })
    }
    // Another address is not held back by it.
    expect((await platform({ 'x-auth-token': account.xAuthToken }, BYSTANDER)).statusCode).toBe(200)
    expect((await platform(wrongToken(99), BYSTANDER)).statusCode).toBe(401)
    // The window ends: the credential is checked again.
    t.clock.set(new Date(minute + 60_000))
    expect((await platform({ 'x-auth-token': account.xAuthToken })).statusCode).toBe(200)
  })

  it('stream: every wrong token counts for the address, not a counter of its own', async () => {
    for (let i = 0; i < LIMIT; i++) expect((await stream(wrongBearer(i))).statusCode).toBe(401)
    for (const headers of [wrongBearer(LIMIT), account.bearer]) {
      const refused = await stream(headers)
      expect(refused.statusCode, refused.body).toBe(429)
      expect(refused.headers['retry-after']).toBe('50')
      expect(refused.headers['content-type']).toMatch(/^application\/vnd\.api\+json/)
      expect(refused.json()).toEqual(TOO_MANY_STREAM)
    }
    expect((await stream(account.bearer, BYSTANDER)).statusCode).toBe(200)
  })

  it('counts failures on both interfaces together', async () => {
    for (let i = 0; i < LIMIT; i++) {
      const response = i % 2 === 0 ? await platform(wrongToken(i)) : await stream(wrongBearer(i))
      expect(response.statusCode).toBe(401)
    }
    expect((await stream(account.bearer)).statusCode).toBe(429)
    expect((await platform({ 'x-auth-token': account.xAuthToken })).statusCode).toBe(429)
  })

  it('ignores a forged, rotating X-Forwarded-For by default', async () => {
    for (let i = 0; i < LIMIT; i++) {
      expect((await platform({ ...wrongToken(i), 'x-forwarded-for': `203.0.113.${i}` })).statusCode).toBe(401)
    }
    expect((await platform({ ...wrongToken(LIMIT), 'x-forwarded-for': '203.0.113.200' })).statusCode).toBe(429)
    expect((await stream({ ...wrongBearer(LIMIT), 'x-forwarded-for': '203.0.113.201' })).statusCode).toBe(429)
  })
})

describe('with TRUST_PROXY set to the proxy in front of the server', () => {
  const PROXY = '192.0.2.1'
  let proxied: FastifyInstance

  beforeAll(async () => {
    const config = loadConfig({ LOG_LEVEL: 'silent', RUN_CONCURRENCY: '0', AUTH_FAILURES_PER_MINUTE: String(LIMIT), TRUST_PROXY: `${PROXY}, 10.0.0.0/8` })
    proxied = await buildApp({ db: t.db, config, logger: false, clock: t.clock.now })
    await proxied.ready()
  })
  afterAll(async () => {
    await proxied?.close()
  })

  it('counts per forwarded client address, and only when the proxy forwarded the request', async () => {
    const viaProxy = (client: string, headers: Record<string, string>) => platform({ ...headers, 'x-forwarded-for': client }, PROXY, proxied)
    for (let i = 0; i < LIMIT; i++) expect((await viaProxy('203.0.113.7', wrongToken(i))).statusCode).toBe(401)
    expect((await viaProxy('203.0.113.7', { 'x-auth-token': account.xAuthToken })).statusCode).toBe(429)
    // Another client behind the same proxy is a different address.
    expect((await viaProxy('203.0.113.8', { 'x-auth-token': account.xAuthToken })).statusCode).toBe(200)
    // A client that is not a configured proxy cannot choose its address with the header.
    for (let i = 0; i < LIMIT; i++)
      expect((await platform({ ...wrongToken(i), 'x-forwarded-for': `203.0.113.${50 + i}` }, ATTACKER, proxied)).statusCode).toBe(401)
    expect((await platform({ 'x-auth-token': account.xAuthToken, 'x-forwarded-for': '203.0.113.99' }, ATTACKER, proxied)).statusCode).toBe(429)
  })
})

describe('TRUST_PROXY', () => {
  const trust = (value: string) => loadConfig({ TRUST_PROXY: value }).TRUST_PROXY

  it('is off unless set, and takes a hop count or proxy addresses and ranges', () => {
    expect(loadConfig({}).TRUST_PROXY).toBe(false)
    expect(trust('false')).toBe(false)
    expect(trust('2')).toBe(2)
    expect(trust('127.0.0.1, 10.0.0.0/8,::1,fd00::/8,loopback')).toEqual(['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8', 'loopback'])
  })

  it.each(['true', 'TRUE', 'proxy.internal', '10.0.0.0/33', '127.0.0.1/8/8', '1.2.3'])('refuses %s at start-up', (value) => {
    expect(() => trust(value)).toThrow(ConfigError)
    expect(() => trust(value)).toThrow(/TRUST_PROXY/)
  })
})
