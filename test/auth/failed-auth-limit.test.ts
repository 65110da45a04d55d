import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { revokeToken } from '../../src/accounts/accounts.js'
import { buildApp } from '../../src/app.js'
import { PostgresWindowCounters } from '../../src/db/window-counters.js'
import { hashSecret } from '../../src/auth/secrets.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { useTestApp, type TestAccount } from '../helpers/test-app.js'

// Failed authentications count per caller address (request.ip) on both interfaces, and the address
// is the connection's own unless a configured proxy forwarded the request. A credential with a public
// id (a client_id, a token's `cpat_<id>_…`) also counts per address and id, and is checked unless that
// counter is over the limit: its neighbours' failures never refuse it (issue 21).

const LIMIT = 5
// The stream rate limit (per second) high: this file's clock stands still within a test.
const t = useTestApp({ AUTH_FAILURES_PER_MINUTE: String(LIMIT), RATE_LIMIT_OTHER: '1000' })
// 10 s into a minute: the window ends, and Retry-After points, 50 s later.
let minute = Date.UTC(2031, 0, 1, 0, 0, 0)
beforeEach(() => {
  minute += 120_000
  t.clock.set(new Date(minute + 10_000))
})

const ATTACKER = '198.51.100.10'
const BYSTANDER = '198.51.100.20'
const FROM_ADDRESS = 'Too many failed authentications from this address; try again in 50 s'
const OF_CREDENTIAL = 'Too many failed authentications of this credential from this address; try again in 50 s'
const TOO_MANY_STREAM = { errors: [{ status: '429', title: 'Too Many Requests', detail: FROM_ADDRESS }] }

let account: TestAccount
beforeAll(async () => {
  account = await t.account()
})

type Headers = Record<string, string>
const platform = (headers: Headers, remoteAddress = ATTACKER, app?: FastifyInstance) =>
  (app ?? t.app).inject({ method: 'GET', url: '/platform/v2/projects', headers: { accept: 'application/json', ...headers }, remoteAddress })
/** A platform route that takes the bearer token too. */
const platformBearer = (headers: Headers, remoteAddress = ATTACKER) =>
  t.app.inject({ method: 'GET', url: '/platform/v2/webhooks', headers: { accept: 'application/json', ...headers }, remoteAddress })
const stream = (headers: Headers, remoteAddress = ATTACKER) => t.request({ method: 'GET', url: '/streams', headers, remoteAddress })
const wrongToken = (i: number) => ({ 'x-auth-token': `cp_guess${i}:secret${i}` })
const wrongBearer = (i: number) => ({ authorization: `Bearer cpat_guess${i}` })
/** A token of today's shape whose public id names no token. */
const inventedIdBearer = (i: number) => ({ authorization: `Bearer cpat_${i.toString(16).padStart(16, '0')}_${randomBytes(32).toString('base64url')}` })
/** A token of the shape issued before public ids (`cpat_` and 43 characters), unknown. */
const legacyShapedBearer = () => ({ authorization: `Bearer cpat_${randomBytes(32).toString('base64url')}` })
const clientIdOf = (a: TestAccount) => a.xAuthToken.slice(0, a.xAuthToken.indexOf(':'))
const tokenPublicIdOf = (a: TestAccount) => /^cpat_([0-9a-f]{16})_/.exec(a.token)?.[1] ?? ''

/** A personal access token as issued before public ids, put straight into the table. */
async function legacyToken(accountId: string): Promise<string> {
  const token = `cpat_${randomBytes(32).toString('base64url')}`
  await t.db
    .insertInto('access_token')
    .values({ account_id: accountId, name: 'legacy', token_hash: hashSecret(token), revoked_at: null })
    .execute()
  return token
}

function expectRefused(response: { statusCode: number; body: string; headers: Record<string, unknown>; json(): unknown }, message = FROM_ADDRESS) {
  expect(response.statusCode, response.body).toBe(429)
  expect(response.headers['retry-after']).toBe('50')
  if (String(response.headers['content-type']).startsWith('application/vnd.api+json')) {
    expect(response.json()).toEqual({ errors: [{ status: '429', title: 'Too Many Requests', detail: message }] })
  } else {
    expect(response.json()).toEqual({ success: false, message })
  }
}

describe('failed authentications per caller address', () => {
  it('platform: different wrong credentials from one address reach 429 with Retry-After; the valid one still gets in', async () => {
    for (let i = 0; i < LIMIT; i++) expect((await platform(wrongToken(i))).statusCode).toBe(401)
    for (const headers of [wrongToken(LIMIT), {}, { 'x-auth-token': 'no colon' }]) expectRefused(await platform(headers))
    // The valid credential is not refused because others failed at its address (issue 21).
    expect((await platform({ 'x-auth-token': account.xAuthToken })).statusCode).toBe(200)
    // Another address is not held back by it.
    expect((await platform({ 'x-auth-token': account.xAuthToken }, BYSTANDER)).statusCode).toBe(200)
    expect((await platform(wrongToken(99), BYSTANDER)).statusCode).toBe(401)
    // The window ends: wrong credentials are checked again.
    t.clock.set(new Date(minute + 60_000))
    expect((await platform(wrongToken(LIMIT))).statusCode).toBe(401)
  })

  it('stream: every wrong token counts for the address, not a counter of its own', async () => {
    for (let i = 0; i < LIMIT; i++) expect((await stream(wrongBearer(i))).statusCode).toBe(401)
    const refused = await stream(wrongBearer(LIMIT))
    expectRefused(refused)
    expect(refused.headers['content-type']).toMatch(/^application\/vnd\.api\+json/)
    expect(refused.json()).toEqual(TOO_MANY_STREAM)
    expect((await stream(account.bearer)).statusCode).toBe(200)
    expect((await stream(account.bearer, BYSTANDER)).statusCode).toBe(200)
  })

  it('counts failures on both interfaces together', async () => {
    for (let i = 0; i < LIMIT; i++) {
      const response = i % 2 === 0 ? await platform(wrongToken(i)) : await stream(wrongBearer(i))
      expect(response.statusCode).toBe(401)
    }
    expectRefused(await stream({}))
    expectRefused(await platform(wrongToken(99)))
    expect((await stream(account.bearer)).statusCode).toBe(200)
    expect((await platform({ 'x-auth-token': account.xAuthToken })).statusCode).toBe(200)
  })

  it('ignores a forged, rotating X-Forwarded-For by default', async () => {
    for (let i = 0; i < LIMIT; i++) {
      expect((await platform({ ...wrongToken(i), 'x-forwarded-for': `203.0.113.${i}` })).statusCode).toBe(401)
    }
    expect((await platform({ ...wrongToken(LIMIT), 'x-forwarded-for': '203.0.113.200' })).statusCode).toBe(429)
    expect((await stream({ ...wrongBearer(LIMIT), 'x-forwarded-for': '203.0.113.201' })).statusCode).toBe(429)
  })
})

describe('valid credentials at an address over the limit (issue 21)', () => {
  it('a valid X-Auth-Token and bearer token keep getting 200 after 40 failed attempts from their address; the guesser gets 429', async () => {
    const revoked = await t.account('Revoked job')
    await revokeToken(t.db, (await t.db.selectFrom('access_token').select('id').where('account_id', '=', revoked.accountId).executeTakeFirstOrThrow()).id)
    // Behind one NAT: a job with a revoked token, and someone trying every kind of wrong credential.
    const guesses: (() => Promise<{ statusCode: number; body: string; headers: Record<string, unknown>; json(): unknown }>)[] = [
      () => stream(revoked.bearer),
      () => platformBearer(revoked.bearer),
      () => platform(wrongToken(1)),
      () => stream(wrongBearer(2)),
      () => stream(inventedIdBearer(3)),
      () => platformBearer(inventedIdBearer(4)),
      () => stream(legacyShapedBearer()),
      () => platform({}),
      () => stream({}),
      () => platform({ 'x-auth-token': `${clientIdOf(revoked)}x:secret` }),
    ]
    const statuses: number[] = []
    for (let i = 0; i < 40; i++) {
      const response = await guesses[i % guesses.length]!()
      statuses.push(response.statusCode)
      if (i >= LIMIT) expectRefused(response)
      // Every few guesses the valid credentials of the same address are let in, and not counted.
      if (i % 4 === 0) {
        expect((await platform({ 'x-auth-token': account.xAuthToken })).statusCode).toBe(200)
        expect((await stream(account.bearer)).statusCode).toBe(200)
        expect((await platformBearer(account.bearer)).statusCode).toBe(200)
      }
    }
    expect(statuses).toEqual([...Array<number>(LIMIT).fill(401), ...Array<number>(40 - LIMIT).fill(429)])
    // Spelled otherwise, the valid credentials are still themselves.
    expect((await stream({ authorization: `bearer  ${account.token}` })).statusCode).toBe(200)
    expect((await platform({ 'x-auth-token': account.xAuthToken.replace(':', ' :  ') })).statusCode).toBe(200)
  })

  it('valid requests are never counted as failures', async () => {
    for (let i = 0; i < 3 * LIMIT; i++) expect((await platform({ 'x-auth-token': account.xAuthToken })).statusCode).toBe(200)
    for (let i = 0; i < LIMIT; i++) expect((await platform(wrongToken(i))).statusCode).toBe(401)
    expectRefused(await platform(wrongToken(LIMIT)))
  })

  it('guessing the secret of one existing client id from one address is throttled for that id', async () => {
    const victim = await t.account('Victim')
    const clientId = clientIdOf(victim)
    for (let i = 0; i < LIMIT; i++) expect((await platform({ 'x-auth-token': `${clientId}:wrong${i}` })).statusCode).toBe(401)
    // Further guesses of the id from this address answer 429, in any spelling; guessed ids of no credential too.
    expectRefused(await platform({ 'x-auth-token': `${clientId}:wrong${LIMIT}` }), OF_CREDENTIAL)
    expectRefused(await platform({ 'x-auth-token': ` ${clientId} :wrong` }), OF_CREDENTIAL)
    expectRefused(await platform(wrongToken(LIMIT)))
    // The valid secret of the guessed id is never refused: a neighbour's mistyped secret locks nobody out.
    expect((await platform({ 'x-auth-token': victim.xAuthToken })).statusCode).toBe(200)
    // Other credentials at the address, and the same credential elsewhere, are not held back.
    expect((await platform({ 'x-auth-token': account.xAuthToken })).statusCode).toBe(200)
    expect((await platform({ 'x-auth-token': victim.xAuthToken }, BYSTANDER)).statusCode).toBe(200)
    // The window ends: the id is checked again.
    t.clock.set(new Date(minute + 60_000))
    expect((await platform({ 'x-auth-token': victim.xAuthToken })).statusCode).toBe(200)
  })

  it('guessing the secret of one existing token id from one address is throttled for that id, on both interfaces', async () => {
    const victim = await t.account('Token victim')
    const guess = () => ({ authorization: `Bearer cpat_${tokenPublicIdOf(victim)}_${randomBytes(32).toString('base64url')}` })
    for (let i = 0; i < LIMIT; i++) expect((await (i % 2 === 0 ? stream(guess()) : platformBearer(guess()))).statusCode).toBe(401)
    expectRefused(await stream(guess()), OF_CREDENTIAL)
    expectRefused(await platformBearer(guess()), OF_CREDENTIAL)
    expect((await stream(victim.bearer)).statusCode).toBe(200)
    expectRefused(await stream(inventedIdBearer(7)))
    expect((await stream(account.bearer)).statusCode).toBe(200)
    expect((await stream(victim.bearer, BYSTANDER)).statusCode).toBe(200)
  })

  it('a legacy-format valid token still authenticates, also while its address is over the limit', async () => {
    const token = await legacyToken(account.accountId)
    expect(token).toHaveLength(48)
    const legacy = { authorization: `Bearer ${token}` }
    expect((await stream(legacy)).statusCode).toBe(200)
    expect((await platformBearer(legacy)).statusCode).toBe(200)
    for (let i = 0; i < LIMIT - 1; i++) expect((await platform(wrongToken(i))).statusCode).toBe(401)
    expect((await stream(legacy)).statusCode).toBe(200)
    expect((await platform(wrongToken(LIMIT))).statusCode).toBe(401)
    // Over the limit, guesses are answered 429, and a valid token, even without a public id, passes.
    expectRefused(await stream({ authorization: `Bearer cpat_${randomBytes(32).toString('base64url')}` }))
    expect((await stream(legacy)).statusCode).toBe(200)
    expect((await platformBearer(legacy)).statusCode).toBe(200)
    expect((await stream(legacy, BYSTANDER)).statusCode).toBe(200)
    // The new-format token of the same account is not held back.
    expect((await stream(account.bearer)).statusCode).toBe(200)
    t.clock.set(new Date(minute + 60_000))
    expect((await stream(legacy)).statusCode).toBe(200)
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
    expect((await viaProxy('203.0.113.7', wrongToken(LIMIT))).statusCode).toBe(429)
    expect((await viaProxy('203.0.113.7', { 'x-auth-token': account.xAuthToken })).statusCode).toBe(200)
    // Another client behind the same proxy is a different address.
    expect((await viaProxy('203.0.113.8', wrongToken(LIMIT))).statusCode).toBe(401)
    // A client that is not a configured proxy cannot choose its address with the header.
    for (let i = 0; i < LIMIT; i++)
      expect((await platform({ ...wrongToken(i), 'x-forwarded-for': `203.0.113.${50 + i}` }, ATTACKER, proxied)).statusCode).toBe(401)
    expect((await platform({ ...wrongToken(LIMIT), 'x-forwarded-for': '203.0.113.99' }, ATTACKER, proxied)).statusCode).toBe(429)
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

describe('failed authentications counted by every process on the database', () => {
  // Two apps with the counters in Postgres, as two server processes on a DATABASE_URL keep them.
  let first: FastifyInstance
  let second: FastifyInstance
  beforeAll(async () => {
    const shared = () => buildApp({ db: t.db, config: t.config, logger: false, clock: t.clock.now, counters: new PostgresWindowCounters(t.db) })
    ;[first, second] = await Promise.all([shared(), shared()])
    await Promise.all([first.ready(), second.ready()])
  })
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()])
  })

  it('refuses the guess after the limit with 429 on either process, the failures spread over both', async () => {
    const address = '198.51.100.77'
    for (let i = 0; i < LIMIT; i++) {
      const response = await platform(wrongToken(i), address, i % 2 === 0 ? first : second)
      expect(response.statusCode, `failure ${i + 1}`).toBe(401)
    }
    for (const app of [first, second]) {
      const refused = await platform(wrongToken(99), address, app)
      expect(refused.statusCode).toBe(429)
      expect(refused.json<{ message: string }>().message).toBe(FROM_ADDRESS)
    }
    // A valid credential from the same address still passes, on both.
    for (const app of [first, second]) expect((await platform(account.platform, address, app)).statusCode).toBe(200)
  })
})
