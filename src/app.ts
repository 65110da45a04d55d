import { sharedSchemaCompilers } from './http/schema-compilers.js'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { FailedAuthLimit } from './auth/failed-auth-limit.js'
import { MemoryWindowCounters, PostgresWindowCounters, type WindowCounters } from './db/window-counters.js'
import { credentialBoxOf, type CredentialBox } from './auth/credential-box.js'
import type { Config, TrustProxy } from './config.js'
import { ConnectionSlots } from './db/connection-slots.js'
import { SpoolBudget } from './streams/upload-spool.js'
import type { Db } from './db/database.js'
import type { FeedStorage } from './feeds/feed-storage.js'
import { feedRoutes } from './feed-api/feed-routes.js'
import { configuredFeedStorage } from './feeds/configured-storage.js'
import { answerClientError, answerFrameworkError, noRoute, sendPlatformError } from './http/error-funnels.js'
import { healthRoutes } from './ops-api/health-routes.js'
import { API_DESCRIPTION, completeDocument, securitySchemes, serviceTags } from './http/openapi.js'
import { drainUnreadBody } from './http/unread-body.js'
import { registerRequestScope, requestIdOf } from './http/request-scope-hooks.js'
import { logOptions } from './http/log-options.js'
import './http/fastify-types.js'
import { jobsPlugin } from './jobs/jobs-plugin.js'
import { AppMetrics } from './ops-api/app-metrics.js'
import { metricsRoutes } from './ops-api/metrics-routes.js'
import { createOutboundGuard, type OutboundGuard, type ResolveHost } from './net/outbound-guard.js'
import { platformErrorExamples, platformOperations, platformTags } from './platform-api/openapi-docs.js'
import { platformPlugin } from './platform-api/platform-plugin.js'
import { CountedRateLimits, type RateLimitStore } from './http/rate-limit.js'
import { streamErrorExamples, streamOperations, streamTags } from './stream-api/openapi-docs.js'
import { streamPlugin } from './stream-api/stream-plugin.js'
import { consoleErrorPage, consolePlugin, refusalPage } from './console-web/console-plugin.js'

export interface AppDeps {
  db: Db
  config: Config
  /** The time as the app sees it; tests move it (name reservation, rate-limit windows). */
  clock?: () => Date
  rateLimits?: RateLimitStore
  /** The counters of rate limits and failed authentications; in Postgres on a DATABASE_URL, in memory otherwise, unless given. */
  counters?: WindowCounters
  /** Logger options; tests pass false. */
  logger?: FastifyServerOptions['logger']
  /** Name resolution of the outbound guard; tests give one to play DNS rebinding. */
  resolveHost?: ResolveHost
  /** Where exported feed files are kept; as FEED_STORAGE says unless given. */
  feedStorage?: FeedStorage
  /** The key that seals file servers' credentials; as CREDENTIALS_KEY says unless given. */
  credentials?: CredentialBox
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { db, config, logger, clock = () => new Date(), rateLimits, resolveHost, feedStorage } = deps
  const credentials = deps.credentials ?? credentialBoxOf(config)
  const feeds = feedStorage ?? configuredFeedStorage(config, db)
  // On a DATABASE_URL other processes may share the database: the counters live there, so that a
  // limit holds across all of them. The embedded Postgres serves this process (and its CLI) alone.
  const counters = deps.counters ?? (config.DATABASE_URL ? new PostgresWindowCounters(db) : new MemoryWindowCounters())
  const limits = rateLimits ?? new CountedRateLimits(counters)
  const app = createFastify(config, logger)
  // The hooks and the metrics first, so that they cover every route registered after them.
  const metrics = await registerHooksAndMetrics(app, db, config)
  await registerApiReference(app)

  // Checked at save and at connect time, by the channel routes and by the pushes to http destinations.
  const outbound = createOutboundGuard({ allowPrivate: config.ALLOW_PRIVATE_DESTINATIONS, resolve: resolveHost })
  // Background work (runs, pushes, schedules, cleanup). Before the interfaces: they queue runs on its queue.
  await app.register(jobsPlugin, { db, config, clock, feedStorage: feeds, outbound, credentials, metrics })

  await registerInterfaces(app, { db, config, clock, rateLimits: limits, counters, outbound, credentials, feedStorage: feeds, metrics })
  app.setNotFoundHandler((request, reply) => sendPlatformError(noRoute(request), request, reply))
  return app
}

/** The Fastify instance, with the error funnels for what fails before routing. */
function createFastify(config: Config, logger: AppDeps['logger']) {
  return Fastify({
    logger: logOptions(config, logger),
    requestIdHeader: false,
    genReqId: requestIdOf,
    // X-Forwarded-For only from the configured proxies: from anyone else it would choose the address
    // that the per-address limits count and the logs show.
    trustProxy: trustedProxies(config.TRUST_PROXY),
    // Clients put ids with trailing slashes (`.../stage/intermediate/`).
    // A path parameter may be as long as what it names: a feed file name (255), a product id.
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 1000 },
    // No time limit on plugins and onReady hooks: on a busy database the server waits for them rather
    // than failing to start after Fastify's 10 s default.
    pluginTimeout: 0,
    ajv: { customOptions: { coerceTypes: 'array', useDefaults: true, removeAdditional: false, allErrors: false } },
    schemaController: { compilersFactory: sharedSchemaCompilers },
    // Errors before routing (a URL that does not decode, e.g. an encoded lone surrogate) get the
    // error body of the interface the path belongs to, like every other client mistake.
    frameworkErrors: (error, request, reply) => answerFrameworkError(error, request, reply as unknown as FastifyReply, consoleErrorPage),
    // Requests Node's HTTP parser refuses (headers or URL past 16 KB, a broken Content-Length) never
    // reach Fastify: they are answered here, in the error body of the interface they were meant for.
    clientErrorHandler: (error, socket) => answerClientError(error, socket, { streamPrefix: config.STREAM_PREFIX, consolePage: refusalPage }),
  }).withTypeProvider<TypeBoxTypeProvider>()
}

type App = ReturnType<typeof createFastify>

async function registerHooksAndMetrics(app: App, db: Db, config: Config): Promise<AppMetrics> {
  // First, so that every route's refusal sent before its body was read lets the client finish sending.
  app.addHook('onSend', async (request, reply) => drainUnreadBody(request, reply))
  app.decorateRequest('caller', null)
  app.decorateRequest('deadline', null)
  app.decorateRequest('bodyDigest', null)
  registerRequestScope(app)
  // Before every route: its hook times the requests of the routes registered after it.
  const metrics = new AppMetrics(db)
  await app.register(metricsRoutes, { metrics, token: config.METRICS_TOKEN })
  return metrics
}

// The API reference. Each route's security comes from its config.auth (the interface plugins'
// onRoute hooks), its prose and examples from the interfaces' openapi-docs files, by operationId.
async function registerApiReference(app: App): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Catalog Platform', version: '2.0.0', description: API_DESCRIPTION },
      // Relative: "Try it out" calls the server that serves the reference, whatever its address.
      servers: [{ url: '/', description: 'this server' }],
      tags: [...platformTags, ...streamTags, ...serviceTags],
      components: { securitySchemes },
    },
    transformObject: (built) =>
      completeDocument('openapiObject' in built ? built.openapiObject : built.swaggerObject, {
        operations: { ...platformOperations, ...streamOperations },
        platformErrors: platformErrorExamples,
        streamErrors: streamErrorExamples,
      }),
  })
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { persistAuthorization: true, displayRequestDuration: true } })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  // The front door: someone who opens the server in a browser lands on the interactive reference.
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/docs', 302))
}

interface InterfaceDeps {
  db: Db
  config: Config
  clock: () => Date
  rateLimits: RateLimitStore
  counters: WindowCounters
  outbound: OutboundGuard
  credentials: CredentialBox
  feedStorage: FeedStorage
  metrics: AppMetrics
}

/** Health, feed files, the platform and stream APIs and the console, with the capacity they share. */
async function registerInterfaces(
  app: App,
  { db, config, clock, rateLimits, counters, outbound, credentials, feedStorage, metrics }: InterfaceDeps,
): Promise<void> {
  // Uploads and product reads hold a connection as long as they take: each kind gets its share of
  // the pool, and each account its share of those.
  const { uploadSlots, uploadSpool } = uploadCapacity(config)
  const readSlots = new ConnectionSlots({
    total: config.READ_CONCURRENCY,
    perAccount: config.READS_PER_ACCOUNT,
    queuePerAccount: 0,
  })
  await app.register(healthRoutes, { db, uploadSlots, readSlots, uploadSpool })
  // Feed files of the built-in destination: public, at unguessable URLs.
  await app.register(feedRoutes, { db, feedStorage, readSlots })
  // Failed authentications are counted by every process together, as the rate limits are (design section 8).
  const authLimit = new FailedAuthLimit(counters, config.AUTH_FAILURES_PER_MINUTE, clock)
  const runs = app.runWorker.queue
  await app.register(platformPlugin, { db, config, clock, rateLimits, runs, authLimit, outbound, credentials, readSlots, feedStorage })
  await app.register(streamPlugin, { prefix: config.STREAM_PREFIX, db, config, clock, rateLimits, authLimit, uploadSlots, uploadSpool, metrics })

  const health = () => ({ uploads: uploadSlots.usage, reads: readSlots.usage, spool: uploadSpool.usage })
  await app.register(consolePlugin, { db, config, clock, authLimit, runs, readSlots, feedStorage, health, outbound, credentials })
}

/**
 * Uploads wait for their turn at a connection in a queue per account, their bodies received whole
 * (spooled) first: a burst of an account's uploads is queued, not refused, while one account's queue
 * and spool have bounds of their own, so it cannot take the others' turn or space.
 */
function uploadCapacity(config: Config): { uploadSlots: ConnectionSlots; uploadSpool: SpoolBudget } {
  const uploadSlots = new ConnectionSlots({
    total: config.UPLOAD_CONCURRENCY,
    perAccount: config.UPLOADS_PER_ACCOUNT,
    queuePerAccount: config.UPLOAD_QUEUE_PER_ACCOUNT,
  })
  const uploadSpool = new SpoolBudget({
    dir: config.UPLOAD_SPOOL_DIR,
    memoryBytes: config.UPLOAD_SPOOL_MEMORY_BYTES,
    processBytes: config.UPLOAD_SPOOL_MAX_BYTES,
    accountBytes: config.UPLOAD_SPOOL_ACCOUNT_MAX_BYTES,
  })
  return { uploadSlots, uploadSpool }
}

/** Fastify's hop-count form of trustProxy, which its types leave out: the nearest `hops` proxies. */
function trustedProxies(trust: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof trust === 'number' ? (_address, hop) => hop < trust : trust
}
