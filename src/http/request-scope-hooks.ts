import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyRequest, RawRequestDefaultExpression } from 'fastify'
import { withRequestScope, type Actor, type RequestFacts } from '../activity/request-scope.js'
import { actorOfCaller } from '../auth/caller.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Who makes the request's changes, where it is not a caller of the API (a console session, the operator). */
    actor: Actor | null
  }
}

// A client's own X-Request-Id is kept when it could be one (a proxy's, a client library's): the
// answer and the activity entry then carry the id the client logged.
const CLIENT_REQUEST_ID = /^[\x21-\x7e]{1,128}$/
const USER_AGENT_CHARACTERS = 512

/** The request's id: the client's X-Request-Id when it is a plausible one, a new UUID otherwise. */
export function requestIdOf(raw: RawRequestDefaultExpression): string {
  const sent = raw.headers['x-request-id']
  return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID()
}

/**
 * Every answer names its request (X-Request-Id), and every handler runs in the scope of its actor
 * and request, which the changes it makes record (src/activity/activity-store.ts). Registered on
 * the root instance, so that it covers every interface; each interface's authentication sets the actor.
 */
export function registerRequestScope(app: FastifyInstance): void {
  app.decorateRequest('actor', null)
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })
  // A callback hook, so that the handler runs inside the scope (an async one would leave it on return).
  app.addHook('preHandler', (request, _reply, done) => {
    const actor = request.actor ?? (request.caller ? actorOfCaller(request.caller) : null)
    if (!actor) return done()
    withRequestScope({ actor, request: factsOf(request) }, done)
  })
}

/** The request as an activity entry records it; its Idempotency-Key only where the route honours it (idempotent-answer.ts). */
function factsOf(request: FastifyRequest): RequestFacts {
  const agent = request.headers['user-agent']
  const userAgent = typeof agent === 'string' ? agent.slice(0, USER_AGENT_CHARACTERS) : null
  return { id: request.id, address: request.ip ?? null, userAgent, idempotencyKey: null }
}
