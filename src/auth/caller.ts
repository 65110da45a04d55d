import type { FastifyRequest } from 'fastify'
import { UnauthorizedError } from '../errors.js'
import type { Actor } from '../activity/request-scope.js'
import type { AuthScheme, Caller } from './authenticate.js'

// What authentication adds to Fastify's types. It is declared here, beside the caller, so that the
// http folder (which documents `config.auth` in the API reference) depends on auth and never the reverse.
declare module 'fastify' {
  interface FastifyContextConfig {
    /** Credentials the route accepts; `none` for public routes. Platform routes default to x-auth-token. */
    auth?: AuthScheme | 'none'
  }
  interface FastifyRequest {
    caller: Caller | null
  }
}

/** The authenticated account of a request; the auth hook has set it on every protected route. */
export function accountOf(request: FastifyRequest): string {
  if (!request.caller) throw new UnauthorizedError()
  return request.caller.accountId
}

/** The actor of the activity log for a caller of the platform or stream interface. */
export function actorOfCaller(caller: Caller): Actor {
  const separator = caller.credentialId.indexOf(':')
  const id = caller.credentialId.slice(separator + 1)
  return caller.credentialId.startsWith('platform:') ? { type: 'platform_credential', id, label: caller.label } : { type: 'token', id, label: caller.label }
}
