import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { authenticate } from '../../src/auth/authenticate.js'
import { loadConfig } from '../../src/config.js'
import { children, runCli } from '../helpers/child-server.js'
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js'

// The operator CLI as an operator runs it: a child process with DATABASE_URL pointing at this
// file's own database, checked through its output, its exit code and the running app.

type CliResult = Awaited<ReturnType<typeof runCli>>

/** Parses stdout that must be exactly one line of JSON. */
function singleJson<T>(result: CliResult): T {
  expect(result.code, result.stderr).toBe(0)
  expect(result.stdout.endsWith('\n')).toBe(true)
  expect(result.stdout.trimEnd().split('\n')).toHaveLength(1)
  return JSON.parse(result.stdout) as T
}

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex')

interface CreatedAccountJson {
  account_id: string
  client_id: string
  client_secret: string
  x_auth_token: string
  token: string
}
interface CreatedTokenJson {
  token_id: string
  name: string
  token: string
}
interface TokenRow {
  token_id: string
  name: string
  created_at: string
  revoked_at: string | null
}
interface AccountRow {
  account_id: string
  name: string
  client_id: string | null
  created_at: string
}
interface RotatedJson {
  client_id: string
  client_secret: string
  x_auth_token: string
}

let database: TestDatabase
let app: FastifyInstance
let env: NodeJS.ProcessEnv
let created: CreatedAccountJson | undefined
let issued: CreatedTokenJson | undefined
let rotated: RotatedJson | undefined

const cli = (...args: string[]) => runCli(args, env)
const projectsWith = (xAuthToken: string) => app.inject({ method: 'GET', url: '/platform/v2/projects', headers: { 'x-auth-token': xAuthToken } })

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`an earlier test did not produce ${what}`)
  return value
}

beforeAll(async () => {
  database = await createTestDatabase()
  env = { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'silent' }
  app = await buildApp({ db: database.db, config: loadConfig({ LOG_LEVEL: 'silent' }), logger: false })
  await app.ready()
})

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL')
  await app?.close()
  await database?.drop()
})

describe('catalog-platform CLI', { timeout: 120_000 }, () => {
  it('accounts create --json prints one JSON object whose X-Auth-Token opens the platform interface', async () => {
    const result = await cli('accounts', 'create', '--name', 'Shop Operator', '--json')
    const account = singleJson<CreatedAccountJson>(result)
    expect(Object.keys(account).sort()).toEqual(['account_id', 'client_id', 'client_secret', 'token', 'x_auth_token'])
    expect(account.account_id).toMatch(/^[1-9]\d*$/)
    expect(account.x_auth_token).toBe(`${account.client_id}:${account.client_secret}`)
    expect(account.token).not.toBe('')
    created = account

    const projects = await projectsWith(account.x_auth_token)
    expect(projects.statusCode).toBe(200)
    expect(projects.json()).toEqual({ success: true, Projects: [] })

    // The personal access token printed with it is a working bearer token of the same account.
    const caller = await authenticate(database.db, 'x-auth-token-or-bearer', { authorization: `Bearer ${account.token}` })
    expect(caller).toEqual({ accountId: account.account_id, credentialId: expect.stringMatching(/^token:\d+$/), label: 'default' })
    expect(account.token).toMatch(/^cpat_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/)
  })

  it('accounts create without --json prints the credential for a human', async () => {
    const result = await cli('accounts', 'create', '--name', 'Second')
    expect(result.code, result.stderr).toBe(0)
    const xAuthToken = /X-Auth-Token:\s+(\S+)/.exec(result.stdout)?.[1]
    expect(xAuthToken).toBeDefined()
    expect((await projectsWith(xAuthToken ?? '')).statusCode).toBe(200)
  })

  it('accounts list shows the accounts', async () => {
    const account = need(created, 'an account')
    const json = await cli('accounts', 'list', '--json')
    const rows = singleJson<AccountRow[]>(json)
    expect(rows.map((r) => r.name)).toEqual(['Shop Operator', 'Second'])
    expect(rows[0]).toMatchObject({ account_id: account.account_id, client_id: account.client_id })

    const text = await cli('accounts', 'list')
    expect(text.code, text.stderr).toBe(0)
    const lines = text.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]?.split('\t').slice(0, 3)).toEqual([account.account_id, 'Shop Operator', account.client_id])
  })

  it('tokens create --json issues a bearer token that tokens list shows as active', async () => {
    const account = need(created, 'an account')
    const token = singleJson<CreatedTokenJson>(await cli('tokens', 'create', '--account', account.account_id, '--name', 'ci', '--json'))
    expect(Object.keys(token).sort()).toEqual(['name', 'token', 'token_id'])
    expect(token.name).toBe('ci')
    expect(token.token_id).toMatch(/^\d+$/)
    issued = token

    const caller = await authenticate(database.db, 'x-auth-token-or-bearer', { authorization: `Bearer ${token.token}` })
    expect(caller).toEqual({ accountId: account.account_id, credentialId: `token:${token.token_id}`, label: 'ci' })

    const list = singleJson<TokenRow[]>(await cli('tokens', 'list', '--account', account.account_id, '--json'))
    expect(list).toHaveLength(2)
    expect(list.find((r) => r.token_id === token.token_id)).toMatchObject({ name: 'ci', revoked_at: null })
    // The list never shows a token itself.
    expect(JSON.stringify(list)).not.toContain(token.token)
  })

  it('tokens revoke TOKEN_ID stops the token from authenticating', async () => {
    const account = need(created, 'an account')
    const token = need(issued, 'a token')
    const result = await cli('tokens', 'revoke', token.token_id)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain(token.token_id)

    expect(await authenticate(database.db, 'x-auth-token-or-bearer', { authorization: `Bearer ${token.token}` })).toBeNull()
    // The account's other token is untouched.
    expect(await authenticate(database.db, 'x-auth-token-or-bearer', { authorization: `Bearer ${account.token}` })).toMatchObject({
      accountId: account.account_id,
    })

    const list = singleJson<TokenRow[]>(await cli('tokens', 'list', '--account', account.account_id, '--json'))
    expect(list.find((r) => r.token_id === token.token_id)?.revoked_at).toEqual(expect.any(String))

    const again = await cli('tokens', 'revoke', token.token_id)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain(token.token_id)
    expect(again.stdout).toBe('')

    // An id beyond a bigint names no token: the same answer, not a database error.
    const huge = await cli('tokens', 'revoke', '99999999999999999999')
    expect(huge.code).toBe(1)
    expect(huge.stderr).toContain('No access token with id 99999999999999999999')
  })

  it("records the CLI's changes in the account's activity, with the user that ran it and no secret", async () => {
    const account = need(created, 'an account')
    const token = need(issued, 'a token')
    const response = await app.inject({ method: 'GET', url: '/platform/v2/activity?actor=cli', headers: { 'x-auth-token': account.x_auth_token } })
    expect(response.statusCode, response.body).toBe(200)
    const entries = response.json<{ Activity: { action: string; actor: { type: string; id: string }; target: { id: string }; changes: object }[] }>().Activity
    expect(entries.map((e) => e.action)).toEqual(['token.revoked', 'token.created', 'token.created', 'credential.created', 'account.created'])
    expect(entries.every((e) => e.actor.type === 'cli' && e.actor.id !== '')).toBe(true)
    expect(entries[0]?.target.id).toBe(token.token_id)
    expect(entries[1]?.changes).toEqual({ name: [null, 'ci'], token: 'changed' })
    for (const secret of [token.token, account.token, account.client_secret]) expect(response.body).not.toContain(secret)
  })

  it('credentials rotate --json replaces the X-Auth-Token', async () => {
    const account = need(created, 'an account')
    const credential = singleJson<RotatedJson>(await cli('credentials', 'rotate', '--account', account.account_id, '--json'))
    expect(Object.keys(credential).sort()).toEqual(['client_id', 'client_secret', 'x_auth_token'])
    expect(credential.x_auth_token).toBe(`${credential.client_id}:${credential.client_secret}`)
    expect(credential.x_auth_token).not.toBe(account.x_auth_token)
    rotated = credential

    const old = await projectsWith(account.x_auth_token)
    expect(old.statusCode).toBe(401)
    expect(old.json()).toEqual({ success: false, message: 'Unauthorized' })
    expect((await projectsWith(credential.x_auth_token)).statusCode).toBe(200)
  })

  it('stores secrets and tokens only as hashes', async () => {
    const account = need(created, 'an account')
    const token = need(issued, 'a token')
    const credential = need(rotated, 'a rotated credential')
    const credentials = await database.db.selectFrom('platform_credential').selectAll().execute()
    const tokens = await database.db.selectFrom('access_token').selectAll().execute()
    const stored = JSON.stringify([credentials, tokens])
    for (const secret of [account.client_secret, account.x_auth_token, account.token, token.token, credential.client_secret, credential.x_auth_token]) {
      expect(stored).not.toContain(secret)
    }
    // SHA-256, as docs/design.md section 4 says: what is stored is the hash of what was shown.
    expect(credentials.find((c) => c.account_id === account.account_id)?.secret_hash).toBe(sha256(credential.client_secret))
    expect(tokens.map((t) => t.token_hash)).toEqual(expect.arrayContaining([sha256(account.token), sha256(token.token)]))
  })

  // Independent of each other: run side by side to keep the file quick.
  describe.concurrent('bad input', () => {
    it.for([
      ['tokens create', ['tokens', 'create', '--account', '999999999', '--json']],
      ['tokens list', ['tokens', 'list', '--account', '999999999']],
      ['credentials rotate', ['credentials', 'rotate', '--account', '999999999', '--json']],
    ] as const)('%s for an unknown account exits 1 with a message on stderr', async ([, args], { expect }) => {
      const result = await cli(...args)
      expect(result.code).toBe(1)
      expect(result.stdout).toBe('')
      expect(result.stderr).toContain('No account with id 999999999')
    })

    it('rejects a non-numeric --account', async ({ expect }) => {
      const result = await cli('tokens', 'create', '--account', 'abc')
      expect(result.code).toBe(1)
      expect(result.stdout).toBe('')
      expect(result.stderr).toContain('--account')
      expect(result.stderr).toContain('abc')
    })

    it('rejects an empty account name and a missing --name, creating nothing', async ({ expect }) => {
      const [empty, missing] = await Promise.all([cli('accounts', 'create', '--name', '   ', '--json'), cli('accounts', 'create', '--json')])
      expect(empty.code).toBe(1)
      expect(empty.stdout).toBe('')
      expect(empty.stderr).toContain('name')
      expect(missing.code).toBe(1)
      expect(missing.stdout).toBe('')
      expect(missing.stderr).toContain('--name')

      const rows = singleJson<AccountRow[]>(await cli('accounts', 'list', '--json'))
      expect(rows).toHaveLength(2)
    })

    it('revoking an unknown token exits 1', async ({ expect }) => {
      const result = await cli('tokens', 'revoke', '987654321')
      expect(result.code).toBe(1)
      expect(result.stdout).toBe('')
      expect(result.stderr).toContain('987654321')
    })
  })
})
