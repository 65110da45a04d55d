import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createToken, revokeToken, rotateCredential } from '../../src/accounts/accounts.js'
import { authenticate, type AuthHeaders, type AuthScheme } from '../../src/auth/authenticate.js'
import { hashSecret } from '../../src/auth/secrets.js'
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
    const byToken = { accountId: a.accountId, credentialId: await tokenCredentialId(a.token), label: expect.any(String) as string }
    const byPlatform = { accountId: a.accountId, credentialId: `platform:${clientIdOf(a)}`, label: clientIdOf(a) }
    expect(await authenticate(t.db, 'x-auth-token-or-bearer', { authorization: `Bearer ${a.token}` })).toEqual(byToken)
    expect(await authenticate(t.db, 'x-auth-token-or-bearer', { authorization: `bearer ${a.token}` })).toEqual(byToken)
    expect(await authenticate(t.db, 'bearer', { authorization: `Bearer ${a.token}` })).toEqual(byToken)
    expect(await authenticate(t.db, 'x-auth-token-or-bearer', { xAuthToken: a.xAuthToken })).toEqual(byPlatform)
  })

  it('issues tokens with a public id, cpat_<16 hex>_<43 base64url>, and stores the hash of the whole token', async () => {
    const a = await t.account()
    const extra = await createToken(t.db, a.accountId, 'ci')
    for (const token of [a.token, extra.token]) {
      expect(token).toMatch(/^cpat_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/)
      const row = await t.db
        .selectFrom('access_token')
        .select(['public_id', 'token_hash'])
        .where('token_hash', '=', hashSecret(token))
        .executeTakeFirstOrThrow()
      expect(row.public_id).toBe(token.slice(5, 21))
    }
  })

  it('resolves every spelling that authenticates to the same credential', async () => {
    const a = await t.account()
    const byToken = { accountId: a.accountId, credentialId: await tokenCredentialId(a.token), label: expect.any(String) as string }
    for (const authorization of [`Bearer ${a.token}`, `bearer ${a.token}`, `BEARER ${a.token}`, `Bearer  ${a.token}`, `Bearer\t${a.token}`]) {
      expect(await authenticate(t.db, 'bearer', { authorization }), JSON.stringify(authorization)).toEqual(byToken)
    }
    const byPlatform = { accountId: a.accountId, credentialId: `platform:${clientIdOf(a)}`, label: clientIdOf(a) }
    for (const xAuthToken of [a.xAuthToken, `${clientIdOf(a)} :${secretOf(a)}`, `${clientIdOf(a)}:  ${secretOf(a)}`]) {
      expect(await authenticate(t.db, 'x-auth-token', { xAuthToken }), xAuthToken).toEqual(byPlatform)
    }
  })

  it('still accepts a token issued before public ids (cpat_ and 43 characters)', async () => {
    const a = await t.account()
    const legacy = `cpat_${randomBytes(32).toString('base64url')}`
    const row = await t.db
      .insertInto('access_token')
      .values({ account_id: a.accountId, name: 'legacy', token_hash: hashSecret(legacy), revoked_at: null })
      .returning('id')
      .executeTakeFirstOrThrow()
    expect(await authenticate(t.db, 'bearer', { authorization: `Bearer ${legacy}` })).toEqual({
      accountId: a.accountId,
      credentialId: `token:${row.id}`,
      label: 'legacy',
    })
    expect((await t.request({ method: 'GET', url: '/streams', headers: { authorization: `Bearer ${legacy}` } })).statusCode).toBe(200)
  })

  it('tells accounts apart', async () => {
    const a = await t.account('A')
    const b = await t.account('B')
    expect(await authenticate(t.db, 'bearer', { authorization: `Bearer ${b.token}` })).toMatchObject({ accountId: b.accountId })
    expect(await authenticate(t.db, 'x-auth-token', { xAuthToken: a.xAuthToken })).toMatchObject({ accountId: a.accountId })
    expect(a.accountId).not.toBe(b.accountId)
  })

  it('refuses a revoked token while other tokens of the account keep working', async () => {
    const a = await t.account()
    const extra = await createToken(t.db, a.accountId, 'ci')
    expect(await authenticate(t.db, 'x-auth-token-or-bearer', { authorization: `Bearer ${extra.token}` })).toEqual({
      accountId: a.accountId,
      credentialId: `token:${extra.id}`,
      label: 'ci',
    })
    await revokeToken(t.db, extra.id)
    expect(await authenticate(t.db, 'x-auth-token-or-bearer', { authorization: `Bearer ${extra.token}` })).toBeNull()
    expect(await authenticate(t.db, 'bearer', { authorization: `Bearer ${extra.token}` })).toBeNull()
    expect(await authenticate(t.db, 'bearer', { authorization: `Bearer ${a.token}` })).toMatchObject({ accountId: a.accountId })
  })

  it.each<[string, (a: TestAccount) => [AuthScheme, AuthHeaders]]>([
    ['a bearer token where only X-Auth-Token is accepted', (a) => ['x-auth-token', { authorization: `Bearer ${a.token}` }]],
    ['an X-Auth-Token where only bearer is accepted', (a) => ['bearer', { xAuthToken: a.xAuthToken }]],
    ['an unknown token', () => ['x-auth-token-or-bearer', { authorization: 'Bearer cpat_unknown' }]],
    ['a wrong secret with a known public id', (a) => ['bearer', { authorization: `Bearer ${a.token.slice(0, 22)}${'A'.repeat(43)}` }]],
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

async function tokenCredentialId(token: string): Promise<string> {
  const row = await t.db.selectFrom('access_token').select('id').where('token_hash', '=', hashSecret(token)).executeTakeFirstOrThrow()
  return `token:${row.id}`
}

function clientIdOf(a: TestAccount): string {
  return a.xAuthToken.slice(0, a.xAuthToken.indexOf(':'))
}

function secretOf(a: TestAccount): string {
  return a.xAuthToken.slice(a.xAuthToken.indexOf(':') + 1)
}
