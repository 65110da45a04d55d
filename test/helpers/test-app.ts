import { randomBytes } from 'node:crypto'
import { PostgresRateLimitStore } from '../../src/http/postgres-rate-limit.js'
import { PostgresWindowCounters } from '../../src/db/window-counters.js'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { afterAll, beforeAll } from 'vitest'
import { createAccount } from '../../src/accounts/accounts.js'
import { buildApp, type AppDeps } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import type { Db } from '../../src/db/database.js'
import { jsonRequest, type Response } from './inject.js'
import { createTestDatabase, type TestDatabase } from './test-database.js'

/** Rate limits high enough that no functional test ever meets them (an env for useTestApp). */
export const HIGH_LIMITS = {
  RATE_LIMIT_OTHER: '100000',
  RATE_LIMIT_PRODUCTS: '100000',
  RATE_LIMIT_BATCHES: '100000',
  // Files that send many uploads of one account at once lift its fair share: they wait for one of
  // the UPLOAD_CONCURRENCY slots, as every account's uploads do.
  UPLOADS_PER_ACCOUNT: '1000',
}

export interface TestAccount {
  accountId: string
  xAuthToken: string
  token: string
  /** Headers for the platform interface. */
  platform: Record<string, string>
  /** Headers with the bearer token. */
  bearer: Record<string, string>
}

/** A clock the test moves by hand (name reservation, rate-limit windows); starts at the real time. */
export interface TestClock {
  now(): Date
  set(date: Date): void
  advance(ms: number): void
}

export interface TestContext {
  clock: TestClock
  app: FastifyInstance
  db: Db
  database: TestDatabase
  config: Config
  account(name?: string): Promise<TestAccount>
  /** app.inject that also parses the JSON body. */
  request(options: InjectOptions): Promise<Response>
}

/**
 * Gives a test file its own database and a real app (every route and plugin) on it.
 * Use at the top level of a file: `const t = useTestApp()`; fields are ready inside tests.
 */
export function useTestApp(
  env: Record<string, string> = {},
  { sharedRateLimits = false, logger = false, ...deps }: Pick<AppDeps, 'resolveHost' | 'logger' | 'feedStorage'> & { sharedRateLimits?: boolean } = {},
): TestContext {
  const context = {} as TestContext
  let current = new Date()
  context.clock = {
    now: () => new Date(current),
    set: (date) => {
      current = new Date(date)
    },
    advance: (ms) => {
      current = new Date(current.getTime() + ms)
    },
  }
  beforeAll(async () => {
    // Every injected request comes from 127.0.0.1 on a clock that stands still, so the many 401s a
    // file checks would end in the failed-authentication limit: it is off unless a file sets it.
    // The same clock makes one window of every platform request a file sends: their per-credential
    // limit is off too unless a file sets it.
    // A key of the file's own: no test writes a key file into the checkout's DATA_DIR.
    const credentialsKey = randomBytes(32).toString('base64')
    context.config = loadConfig({
      LOG_LEVEL: 'silent',
      AUTH_FAILURES_PER_MINUTE: '1000000',
      PLATFORM_RATE_LIMIT: '1000000',
      CREDENTIALS_KEY: credentialsKey,
      ...env,
    })
    // The app's pool is the one the configuration names, as a server's is.
    context.database = await createTestDatabase({ poolSize: context.config.DB_POOL_SIZE })
    context.db = context.database.db
    // sharedRateLimits: the counters in Postgres, as a server on a DATABASE_URL keeps them.
    const rateLimits = sharedRateLimits ? new PostgresRateLimitStore(context.db) : undefined
    const counters = sharedRateLimits ? new PostgresWindowCounters(context.db) : undefined
    // No log unless a file reads it (run and upload logs): then its logger options, e.g. a stream it keeps.
    context.app = await buildApp({ ...deps, db: context.db, config: context.config, logger, clock: context.clock.now, rateLimits, counters })
    await context.app.ready()
    context.account = async (name = 'Test account') => {
      const created = await createAccount(context.db, name)
      return {
        accountId: created.accountId,
        xAuthToken: created.credential.xAuthToken,
        token: created.token.token,
        platform: { 'x-auth-token': created.credential.xAuthToken, accept: 'application/json' },
        bearer: { authorization: `Bearer ${created.token.token}` },
      }
    }
    context.request = jsonRequest(context.app)
  })
  afterAll(async () => {
    await context.app?.close()
    await context.database?.drop()
  })
  return context
}
