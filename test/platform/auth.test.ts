import { describe, expect, it } from 'vitest'
import { createToken, revokeToken, rotateCredential } from '../../src/accounts/accounts.js'
import { authenticate, type AuthHeaders, type AuthScheme } from '../../src/auth/authenticate.js'
import { useTestApp, type TestAccount } from '../helpers/test-app.js'
import { UNAUTHORIZED, type ProjectJson } from '../helpers/responses.js'
import { client, createProject } from '../helpers/clients.js'

const t = useTestApp()

async function getProjects(headers: Record<string, string>) {
  return t.request({ method: 'GET', url: '/platform/v2/projects', headers })
}

function expectUnauthorized(response: Awaited<ReturnType<typeof getProjects>>) {
  expect(response.statusCode, response.body).toBe(401)
  expect(response.json()).toEqual(UNAUTHORIZED)
}

const accept = { accept: 'application/json' }

describe('X-Auth-Token on the platform interface', () => {
  it('lets the valid credential through', async () => {
    const a = await t.account()
    const response = await getProjects(a.platform)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ success: true, Projects: [] })
  })

  it.each<[string, (a: TestAccount) => Record<string, string>]>([
    ['a missing header', () => accept],
    ['an empty header', () => ({ ...accept, 'x-auth-token': '' })],
    ['a header without a colon', (a) => ({ ...accept, 'x-auth-token': a.xAuthToken.replace(':', '') })],
    ['an empty secret', (a) => ({ ...accept, 'x-auth-token': `${clientIdOf(a)}:` })],
    ['an empty client id', (a) => ({ ...accept, 'x-auth-token': `:${secretOf(a)}` })],
    ['an unknown client id', (a) => ({ ...accept, 'x-auth-token': `cp_unknown:${secretOf(a)}` })],
    ['a wrong secret', (a) => ({ ...accept, 'x-auth-token': `${clientIdOf(a)}:${secretOf(a)}x` })],
    ['the bearer token as X-Auth-Token', (a) => ({ ...accept, 'x-auth-token': a.token })],
  ])('answers 401 Unauthorized to %s', async (_case, headers) => {
    const a = await t.account()
    expectUnauthorized(await getProjects(headers(a)))
  })

  it('answers 401 before looking at the resource or the body', async () => {
    const c = await client(t)
    const p = await createProject(c, 'Kept')
    const wrong = { ...accept, 'x-auth-token': `${clientIdOf(c.account)}:wrong` }
    for (const [method, url] of [
      ['GET', `/platform/v2/projects/${p.id}`],
      ['GET', '/platform/v2/projects/999999'],
      ['DELETE', `/platform/v2/projects/${p.id}`],
      ['GET', '/platform/v2/sites/1'],
      ['POST', '/platform/v2/sites/1/tags'],
    ] as const) {
      expectUnauthorized(await t.request({ method, url, headers: wrong }))
    }
    expectUnauthorized(await t.request({ method: 'POST', url: '/platform/v2/projects', headers: wrong, payload: '{broken' }))
    expectUnauthorized(await t.request({ method: 'POST', url: '/platform/v2/projects', headers: wrong, payload: { name: 'Sneaky' } }))
    const projects = (await c.get('/projects')).json<{ Projects: ProjectJson[] }>().Projects
    expect(projects.map((x) => x.name)).toEqual(['Kept'])
  })

  it('refuses the old credential after rotateCredential and accepts the new one on the same data', async () => {
    const c = await client(t)
    await createProject(c, 'Before rotation')
    const rotated = await rotateCredential(t.db, c.account.accountId)
    expectUnauthorized(await getProjects(c.account.platform))
    const response = await getProjects({ ...accept, 'x-auth-token': rotated.xAuthToken })
    expect(response.statusCode).toBe(200)
    expect(response.json<{ Projects: ProjectJson[] }>().Projects.map((p) => p.name)).toEqual(['Before rotation'])
  })

  it('does not accept a bearer token on a plain platform endpoint', async () => {
    const a = await t.account()
    expectUnauthorized(await getProjects({ ...accept, ...a.bearer }))
    const create = await t.request({ method: 'POST', url: '/platform/v2/projects', headers: { ...accept, ...a.bearer }, payload: { name: 'x' } })
    expectUnauthorized(create)
    expect((await getProjects(a.platform)).json()).toEqual({ success: true, Projects: [] })
  })
})

describe('authenticate()', () => {
  it('accepts a valid personal access token for x-auth-token-or-bearer and bearer schemes', async () => {
    const a = await t.account()
    const expected = { accountId: a.accountId }
    expect(await authenticate(t.db, 'x-auth-token-or-bearer', { authorization: `Bearer ${a.token}` })).toEqual(expected)
    expect(await authenticate(t.db, 'x-auth-token-or-bearer', { authorization: `bearer ${a.token}` })).toEqual(expected)
    expect(await authenticate(t.db, 'bearer', { authorization: `Bearer ${a.token}` })).toEqual(expected)
    expect(await authenticate(t.db, 'x-auth-token-or-bearer', { xAuthToken: a.xAuthToken })).toEqual(expected)
  })

  it('tells accounts apart', async () => {
    const a = await t.account('A')
    const b = await t.account('B')
    expect(await authenticate(t.db, 'bearer', { authorization: `Bearer ${b.token}` })).toEqual({ accountId: b.accountId })
    expect(await authenticate(t.db, 'x-auth-token', { xAuthToken: a.xAuthToken })).toEqual({ accountId: a.accountId })
    expect(a.accountId).not.toBe(b.accountId)
  })

  it('refuses a revoked token while other tokens of the account keep working', async () => {
    const a = await t.account()
    const extra = await createToken(t.db, a.accountId, 'ci')
    expect(await authenticate(t.db, 'x-auth-token-or-bearer', { authorization: `Bearer ${extra.token}` })).toEqual({ accountId: a.accountId })
    await revokeToken(t.db, extra.id)
    expect(await authenticate(t.db, 'x-auth-token-or-bearer', { authorization: `Bearer ${extra.token}` })).toBeNull()
    expect(await authenticate(t.db, 'bearer', { authorization: `Bearer ${extra.token}` })).toBeNull()
    expect(await authenticate(t.db, 'bearer', { authorization: `Bearer ${a.token}` })).toEqual({ accountId: a.accountId })
  })

  it.each<[string, (a: TestAccount) => [AuthScheme, AuthHeaders]]>([
    ['a bearer token where only X-Auth-Token is accepted', (a) => ['x-auth-token', { authorization: `Bearer ${a.token}` }]],
    ['an X-Auth-Token where only bearer is accepted', (a) => ['bearer', { xAuthToken: a.xAuthToken }]],
    ['an unknown token', () => ['x-auth-token-or-bearer', { authorization: 'Bearer cpat_unknown' }]],
    ['the scheme without a token', () => ['x-auth-token-or-bearer', { authorization: 'Bearer ' }]],
    ['another scheme', (a) => ['x-auth-token-or-bearer', { authorization: `Basic ${a.token}` }]],
    ['the client secret as bearer token', (a) => ['x-auth-token-or-bearer', { authorization: `Bearer ${secretOf(a)}` }]],
    ['no credential', () => ['x-auth-token-or-bearer', {}]],
  ])('returns null for %s', async (_case, args) => {
    const a = await t.account()
    const [scheme, headers] = args(a)
    expect(await authenticate(t.db, scheme, headers)).toBeNull()
  })
})

function clientIdOf(a: TestAccount): string {
  return a.xAuthToken.slice(0, a.xAuthToken.indexOf(':'))
}

function secretOf(a: TestAccount): string {
  return a.xAuthToken.slice(a.xAuthToken.indexOf(':') + 1)
}
