import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { authAttempt, type AuthScheme, type Caller } from '../auth/authenticate.js'
import { ClientClosedError, RequestTimeoutError, TooManyRequestsError, UnauthorizedError } from '../errors.js'
import { JSON_API, noRoute, sendStreamError } from '../http/error-funnels.js'
import { refuseNulParameters } from '../http/nul-guard.js'
import { documentRoutes } from '../http/openapi.js'
import { rateLimitBucket, rateLimitSubject, type RateLimits } from '../http/rate-limit.js'
import { batchRoutes } from './batch-routes.js'
import type { StreamDeps } from './deps.js'
import { streamRoutes } from './stream-routes.js'
import { uploadRoutes } from './upload-routes.js'

/** The stream interface (JSON:API, bearer tokens), mounted at STREAM_PREFIX. */
export const streamPlugin: FastifyPluginAsync<StreamDeps> = async (app, deps) => {
  const limits = { products: deps.config.RATE_LIMIT_PRODUCTS, batches: deps.config.RATE_LIMIT_BATCHES, other: deps.config.RATE_LIMIT_OTHER }
  // Every route takes the bearer token (identify below); JSON:API documents in and out.
  app.addHook('onRoute', documentRoutes({ auth: STREAM_AUTH, mediaTypes: { consumes: [JSON_API, 'application/json'], produces: [JSON_API] } }))

  app.addHook('onRequest', async (request, reply) => {
    reply.type(JSON_API)
    armDeadline(request, reply, deps.config.STREAM_REQUEST_TIMEOUT_MS)
    const { caller, refusal } = await identify(request, deps)
    const counted = await countRequest(request, reply, deps, limits, caller)
    // A throttled authentication says why in its own 429; a rate-limited request gets the 429 of docs/interface.md section 7.
    if (refusal instanceof TooManyRequestsError) throw refusal
    if (!counted.allowed) throw new TooManyRequestsError(counted.retryAfter)
    if (refusal) throw refusal
    request.caller = caller
  })

  app.addHook('preValidation', async (request) => {
    refuseNulParameters(request.params, 'path parameter')
    refuseNulParameters(request.query, 'query parameter')
  })

  // A request whose deadline passed while its body was still arriving has had its 503 already.
  app.addHook('preHandler', async (request, reply) => {
    if (reply.sent) return reply
    handlerStarted.add(request)
  })

  app.setErrorHandler((thrown, request, reply) => {
    if (reply.sent) return
    return sendStreamError(thrown, request, reply)
  })

  await app.register(
    async (scope: FastifyInstance) => {
      scope.setNotFoundHandler((request, reply) => sendStreamError(noRoute(request), request, reply))
    },
    { prefix: '/streams' },
  )
  await app.register(streamRoutes, deps)
  await app.register(uploadRoutes, deps)
  await app.register(batchRoutes, deps)
}

/** The stream interface takes personal access tokens only (docs/interface.md section 5). */
const STREAM_AUTH: AuthScheme = 'bearer'

/**
 * Who sends the request: the caller its bearer token authenticates, or why not (401, or 429 from the
 * failed-authentication limit). A request that hits no route is not authenticated: it is counted by
 * its address and answered 404.
 */
async function identify(request: FastifyRequest, deps: StreamDeps): Promise<{ caller: Caller | null; refusal: Error | null }> {
  if (request.is404) return { caller: null, refusal: null }
  try {
    const caller = await deps.authLimit.authenticate(request.ip, authAttempt(deps.db, STREAM_AUTH, { authorization: request.headers.authorization }))
    if (caller) return { caller, refusal: null }
    return { caller: null, refusal: new UnauthorizedError('A valid personal access token is required: Authorization: Bearer <token>') }
  } catch (error) {
    if (error instanceof TooManyRequestsError) return { caller: null, refusal: error }
    throw error
  }
}

/**
 * Counts the request (docs/interface.md section 8) and sets the ratelimit-* headers that every stream response
 * carries. The counter is the credential's that authenticated, never the header's text, so that
 * spellings of one token (`Bearer`, `bearer`, two spaces, a tab) share it; a request that did not
 * authenticate is counted by its address, so that guessing tokens is limited too.
 */
async function countRequest(request: FastifyRequest, reply: FastifyReply, deps: StreamDeps, limits: RateLimits, caller: Caller | null) {
  const streamId = (request.params as { streamId?: string } | undefined)?.streamId
  const bucket = rateLimitBucket(request.method, request.routeOptions.url ?? request.url, streamId, limits)
  const outcome = await deps.rateLimits.hit(`${rateLimitSubject(caller, request.ip)} ${bucket.key}`, bucket.limit, deps.clock())
  reply.header('ratelimit-limit', outcome.limit)
  reply.header('ratelimit-observed', outcome.observed)
  reply.header('ratelimit-remaining', outcome.remaining)
  reply.header('ratelimit-reset', outcome.reset)
  return { allowed: outcome.allowed, retryAfter: Math.max(1, outcome.reset - Math.floor(deps.clock().getTime() / 1000)) }
}

/**
 * Every stream request gets a deadline. A request whose handler has not started when it passes
 * (still waiting for its body, or for the database to authenticate it) is answered 503 here; its
 * handler never runs, so nothing is written. Writes watch the signal themselves (UploadDeadline):
 * they answer 503 and roll back. Any other handler is one short read and is left to finish.
 */
function armDeadline(request: FastifyRequest, reply: FastifyReply, timeoutMs: number): void {
  const controller = new AbortController()
  request.deadline = controller.signal
  const timer = setTimeout(() => {
    controller.abort(new RequestTimeoutError(timeoutMs))
    if (reply.sent || handlerStarted.has(request)) return
    void sendStreamError(new RequestTimeoutError(timeoutMs), request, reply)
  }, timeoutMs)
  timer.unref()
  reply.raw.once('close', () => {
    clearTimeout(timer)
    // The connection closed before the answer was out: the client is gone. The work stops (an
    // upload rolls back) instead of waiting for a body that will not come, or for the deadline.
    if (!reply.raw.writableFinished) controller.abort(new ClientClosedError())
  })
}

const handlerStarted = new WeakSet<FastifyRequest>()
