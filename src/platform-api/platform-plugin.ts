import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { authAttempt, type AuthScheme, type Caller } from '../auth/authenticate.js'
import { GoneError, TooManyRequestsError, UnauthorizedError } from '../errors.js'
import { noRoute, sendPlatformError } from '../http/error-funnels.js'
import { MAX_JSON_BODY_BYTES, readJsonBody } from '../http/json-body.js'
import { noteBodyDigest } from '../http/request-digest.js'
import { refuseNulParameters } from '../http/nul-guard.js'
import { documentRoutes } from '../http/openapi.js'
import { endpointKey, rateLimitSubject } from '../http/rate-limit.js'
import type { PlatformDeps } from './deps.js'
import { ErrorBody } from './schemas.js'
import { channelRoutes } from './channel-routes.js'
import { diagnosticsRoutes } from './diagnostics-routes.js'
import { templateRoutes } from './template-routes.js'
import { dataSourceRoutes } from './data-source-routes.js'
import { siteSourceRoutes } from './site-source-routes.js'
import { processRoutes } from './process-routes.js'
import { productRoutes } from './product-routes.js'
import { projectRoutes } from './project-routes.js'
import { ruleRoutes } from './rule-routes.js'
import { siteReportRoutes } from './site-report-routes.js'
import { siteRoutes } from './site-routes.js'
import { tagRoutes } from './tag-routes.js'
import { webhookRoutes } from './webhook-routes.js'
import { activityRoutes } from './activity-routes.js'
import { destinationRoutes } from './destination-routes.js'

/**
 * The platform interface: `/platform/v2` and `/product/v2`, JSON bodies, X-Auth-Token (bearer
 * where a route allows it), and `{success:false,message}` for every error.
 */
export const platformPlugin: FastifyPluginAsync<PlatformDeps> = async (app, deps) => {
  // What each route accepts, checked below and stated in the OpenAPI document alike.
  app.addHook('onRoute', documentRoutes({ auth: DEFAULT_AUTH }))

  // Clients send JSON with no Content-Type or a wrong one (docs/compatibility.md): every body is read as JSON,
  // compressed or not.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_JSON_BODY_BYTES }, async (request: FastifyRequest, body: Buffer) => {
    // The bytes as sent: an Idempotency-Key stands for this body (src/http/idempotent-answer.ts).
    noteBodyDigest(request, body)
    return readJsonBody(body, request.headers['content-encoding'])
  })

  app.addHook('onRequest', async (request, reply) => {
    const scheme = request.routeOptions.config.auth ?? DEFAULT_AUTH
    if (request.is404 || scheme === 'none') return
    const headers = { xAuthToken: request.headers['x-auth-token'], authorization: request.headers.authorization }
    const caller = await deps.authLimit.authenticate(request.ip, authAttempt(deps.db, scheme, headers))
    if (!caller) throw new UnauthorizedError()
    request.caller = caller
    await limitRate(request, reply, deps, caller)
  })

  // A write without a body is validated as an empty object, so the message names the missing field.
  app.addHook('preValidation', async (request) => {
    refuseNulParameters(request.params, 'path parameter')
    refuseNulParameters(request.query, 'query parameter')
    if (request.body === undefined && ['POST', 'PUT', 'PATCH'].includes(request.method)) request.body = {}
  })

  app.setErrorHandler((thrown, request, reply) => sendPlatformError(thrown, request, reply))

  for (const prefix of ['/platform/v2', '/product/v2']) {
    await app.register(
      async (scope: FastifyInstance) => {
        scope.setNotFoundHandler((request, reply) => sendPlatformError(noRoute(request), request, reply))
      },
      { prefix },
    )
  }

  await app.register(projectRoutes, { prefix: '/platform/v2', ...deps })
  await app.register(siteRoutes, { prefix: '/platform/v2', ...deps })
  await app.register(tagRoutes, { prefix: '/platform/v2', ...deps })
  await app.register(dataSourceRoutes, { prefix: '/platform/v2', ...deps })
  await app.register(siteSourceRoutes, { prefix: '/platform/v2', ...deps })
  await app.register(processRoutes, { prefix: '/platform/v2', ...deps })
  await app.register(channelRoutes, { prefix: '/platform/v2', ...deps })
  await app.register(diagnosticsRoutes, { prefix: '/platform/v2', ...deps })
  await app.register(ruleRoutes, { prefix: '/platform/v2', ...deps })
  await app.register(templateRoutes, { prefix: '/platform/v2', ...deps })
  await app.register(siteReportRoutes, { prefix: '/platform/v2', ...deps })
  await app.register(webhookRoutes, { prefix: '/platform/v2', ...deps })
  await app.register(activityRoutes, { prefix: '/platform/v2', ...deps })
  await app.register(destinationRoutes, { prefix: '/platform/v2', ...deps })
  await app.register(productRoutes, { prefix: '/product/v2', ...deps })
  await app.register(withdrawnProductWrites, { prefix: '/platform/v2' })
}

/** The credentials a platform route accepts unless its `config.auth` says otherwise (docs/interface.md section 5). */
const DEFAULT_AUTH: AuthScheme = 'x-auth-token'

// The product write endpoints were withdrawn on 2025-03-31; old clients still call them (docs/compatibility.md).
const withdrawnProductWrites: FastifyPluginAsync = async (app) => {
  // Old clients send compressed, large or broken bodies here: the answer is 410 whatever they sent,
  // so the body is never parsed (what arrives after the answer is read and dropped: unread-body.ts).
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined))
  const gone = async () => {
    throw new GoneError(
      'The product write endpoints were withdrawn on 2025-03-31: upload product data through the stream interface (POST /streams/{streamId}/products)',
    )
  }
  for (const step of ['upload', 'commit', 'discard']) {
    app.route({
      method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      url: `/sites/:siteId/products/:batchId/${step}`,
      config: { auth: 'none' },
      schema: { hide: true, response: { 410: ErrorBody } },
      handler: gone,
    })
  }
}

/**
 * Requests per second per credential and endpoint (PLATFORM_RATE_LIMIT), counted once the caller is
 * known (failed authentications have their own limit): a default no ordinary client meets, so that
 * one runaway script cannot take a process's connections from every other tenant. The counter is the
 * credential's that authenticated, not the header's text (`id :secret` and `id:secret` share it), and
 * a HEAD counts with its GET.
 */
async function limitRate(request: FastifyRequest, reply: FastifyReply, deps: PlatformDeps, caller: Caller): Promise<void> {
  const key = `platform ${rateLimitSubject(caller, request.ip)} ${endpointKey(request.method, request.routeOptions.url ?? request.url)}`
  const outcome = await deps.rateLimits.hit(key, deps.config.PLATFORM_RATE_LIMIT, deps.clock())
  reply.header('x-ratelimit-limit', outcome.limit)
  reply.header('x-ratelimit-remaining', outcome.remaining)
  if (!outcome.allowed) throw new TooManyRequestsError(Math.max(1, outcome.reset - Math.floor(deps.clock().getTime() / 1000)), 'Too many attempts.')
}
