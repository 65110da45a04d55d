import type { FastifyRequest } from 'fastify'
import { UnauthorizedError } from '../errors.js'
import '../http/fastify-types.js'

/** The authenticated account of a request; the auth hook has set it on every protected route. */
export function accountOf(request: FastifyRequest): string {
  if (!request.caller) throw new UnauthorizedError()
  return request.caller.accountId
}
