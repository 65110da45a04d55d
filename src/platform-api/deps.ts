import type { FastifyRequest } from 'fastify'
import type { FailedAuthLimit } from '../auth/failed-auth-limit.js'
import type { Config } from '../config.js'
import type { ConnectionSlots } from '../db/connection-slots.js'
import type { Db } from '../db/database.js'
import type { FeedStorage } from '../feeds/feed-storage.js'
import type { RateLimitStore } from '../http/rate-limit.js'
import type { OutboundGuard } from '../net/outbound-guard.js'
import type { CredentialBox } from '../auth/credential-box.js'
import type { RunQueue } from '../jobs/run-queue.js'
import { baseUrl } from './envelope.js'

/** What every route plugin of the platform interface is given. */
export interface PlatformDeps {
  db: Db
  config: Config
  /** Where process requests queue their runs. */
  runs: RunQueue
  /** Checks the URLs and hosts the service will connect to on an account's behalf (channel destinations, webhooks). */
  outbound: OutboundGuard
  /** Seals the credentials of file server destinations (CREDENTIALS_KEY). */
  credentials: CredentialBox
  /** Product reads' share of the pool, and each account's share of it. */
  readSlots: ConnectionSlots
  /** Failed authentications per caller address, shared with the stream interface. */
  authLimit: FailedAuthLimit
  /** Where exported feed files are kept: a channel's or a site's delete removes theirs. */
  feedStorage: FeedStorage
  /** Request counters per credential and endpoint (PLATFORM_RATE_LIMIT), shared by every process on the database. */
  rateLimits: RateLimitStore
  /** The time as the app sees it (rate-limit windows). */
  clock: () => Date
}

export function baseOf(request: FastifyRequest, deps: PlatformDeps): string {
  return baseUrl(request, deps.config.PUBLIC_URL)
}
