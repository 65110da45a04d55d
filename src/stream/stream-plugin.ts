import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { authenticate } from '../auth/authenticate.js'
import { hashSecret } from '../auth/secrets.js'
import { ClientClosedError, RequestTimeoutError, TooManyRequestsError, UnauthorizedError } from '../errors.js'
import { JSON_API, noRoute, sendStreamError } from '../http/error-funnels.js'
import { refuseNulParameters } from '../http/nul-guard.js'
import { rateLimitBucket } from '../http/rate-limit.js'
import { batchRoutes } from './batch-routes.js'
import type { StreamDeps } from './deps.js'
import { streamRoutes } from './stream-routes.js'
import { uploadRoutes } from './upload-routes.js'

/** The stream interface (JSON:API, bearer tokens), mounted at STREAM_PREFIX. */
export const streamPlugin: FastifyPluginAsync<StreamDeps> = async (app, deps) => {
  const limits = { products: deps.config.RATE_LIMIT_PRODUCTS, batches: deps.config.RATE_LIMIT_BATCHES, other: deps.config.RATE_LIMIT_OTHER }

  app.addHook('onRequest', async (request, reply) => {
    reply.type(JSON_API)
    armDeadline(request, reply, deps.config.STREAM_REQUEST_TIMEOUT_MS)
    // Counted before authentication, so that guessing tokens is rate-limited too.
    const authorization = request.headers.authorization
    const who = authorization ? hashSecret(authorization) : `ip:${request.ip}`
    const streamId = (request.params as { streamId?: string } | undefined)?.streamId
    const bucket = rateLimitBucket(request.method, request.routeOptions.url ?? request.url, streamId, limits)
    const outcome = await deps.rateLimits.hit(`${who} ${bucket.key}`, bucket.limit, deps.clock())
    reply.header('ratelimit-limit', outcome.limit)
    reply.header('ratelimit-observed', outcome.observed)
    reply.header('ratelimit-remaining', outcome.remaining)
    reply.header('ratelimit-reset', outcome.reset)
    if (!outcome.allowed) throw new TooManyRequestsError(Math.max(1, outcome.reset - Math.floor(deps.clock().getTime() / 1000)))
    if (request.is404) return
    const caller = await deps.authLimit.authenticate(request.ip, () => authenticate(deps.db, 'bearer', { authorization }))
    if (!caller) throw new UnauthorizedError('A valid personal access token is required: Authorization: Bearer <token>')
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

  // An answer sent before the body was read to its end (413, 503, a failed upload): the connection
  // closes after it. Kept open, the unread rest of the body would hold the socket, paused, until
  // the keep-alive timeout, and the server's close would wait for it.
  app.addHook('onSend', async (request, reply) => {
    if (request.raw.complete === false) reply.header('connection', 'close')
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
