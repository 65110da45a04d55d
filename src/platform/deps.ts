import type { FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import type { Db } from '../db/database.js'
import { UnauthorizedError } from '../errors.js'
import type { RunQueue } from '../jobs/run-queue.js'
import { baseUrl } from './envelope.js'

/** What every route plugin of the platform interface is given. */
export interface PlatformDeps {
  db: Db
  config: Config
  /** Where process requests queue their runs. */
  runs: RunQueue
}

/** The authenticated account of a request; the auth hook has set it on every protected route. */
export function accountOf(request: FastifyRequest): string {
  if (!request.caller) throw new UnauthorizedError()
  return request.caller.accountId
}

export function baseOf(request: FastifyRequest, deps: PlatformDeps): string {
  return baseUrl(request, deps.config.PUBLIC_URL)
}
