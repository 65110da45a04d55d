import { randomUUID } from 'node:crypto'
import type { Duplex } from 'node:stream'
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { FailedAuthLimit, MemoryFailedAuthStore } from './auth/failed-auth-limit.js'
import type { Config, TrustProxy } from './config.js'
import { ConnectionSlots } from './db/connection-slots.js'
import type { Db } from './db/database.js'
import { feedsDir } from './feeds/feed-storage.js'
import { feedRoutes } from './feeds/feed-routes.js'
import { statusTitle } from './http/http-errors.js'
import { healthRoutes } from './http/health.js'
import { PushWorker } from './jobs/push-worker.js'
import { RunWorker } from './jobs/run-worker.js'
import { runSchedulerTick } from './jobs/scheduler.js'
import './http/fastify-types.js'
import { createOutboundGuard, type ResolveHost } from './net/outbound-guard.js'
import { ErrorBody } from './platform/schemas.js'
import { platformPlugin } from './platform/platform-plugin.js'
import { MemoryRateLimitStore, type RateLimitStore } from './http/rate-limit.js'
import { streamPlugin } from './stream/stream-plugin.js'

export interface AppDeps {
  db: Db
  config: Config
  /** The time as the app sees it; tests move it (name reservation, rate-limit windows). */
  clock?: () => Date
  rateLimits?: RateLimitStore
  /** Logger options; tests pass false. */
  logger?: FastifyServerOptions['logger']
  /** Name resolution of the outbound guard; tests give one to play DNS rebinding. */
  resolveHost?: ResolveHost
}

export async function buildApp({ db, config, logger, clock = () => new Date(), rateLimits = new MemoryRateLimitStore(), resolveHost }: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: logger ?? {
      level: config.LOG_LEVEL,
      redact: { paths: ['req.headers.authorization', 'req.headers["x-auth-token"]'], censor: '[redacted]' },
    },
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    // X-Forwarded-For only from the configured proxies: from anyone else it would choose the address
    // that the per-address limits count and the logs show.
    trustProxy: trustedProxies(config.TRUST_PROXY),
    // Clients put ids with trailing slashes (`.../stage/intermediate/`).
    // A path parameter may be as long as what it names: a feed file name (255), a product id.
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 1000 },
    ajv: { customOptions: { coerceTypes: 'array', useDefaults: true, removeAdditional: false, allErrors: false } },
    // Errors before routing (a URL that does not decode, e.g. an encoded lone surrogate) get the
    // error body of the interface the path belongs to, like every other client mistake.
    frameworkErrors: (error, request, reply) => answerFrameworkError(error, request.url, reply as unknown as FastifyReply),
    // Requests Node's HTTP parser refuses (headers or URL past 16 KB, a broken Content-Length) never
    // reach Fastify: they are answered here, in the error body of the interface they were meant for.
    clientErrorHandler: (error, socket) => answerClientError(error, socket, config.STREAM_PREFIX),
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.decorateRequest('caller', null)
  app.decorateRequest('deadline', null)
  app.addSchema(ErrorBody)

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Catalog Platform', version: '2.0.0', description: 'Platform interface (/platform/v2, /product/v2) and stream interface' },
      components: {
        securitySchemes: {
          xAuthToken: { type: 'apiKey', in: 'header', name: 'X-Auth-Token', description: '<client_id>:<client_secret>' },
          bearer: { type: 'http', scheme: 'bearer', description: 'personal access token' },
        },
      },
      security: [{ xAuthToken: [] }],
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  // The front door: someone who opens the server in a browser lands on the interactive reference.
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/docs', 302))

  // Runs execute in every server process (RUN_CONCURRENCY at a time); pg-boss and the run table in
  // Postgres make sure each run executes once, whichever process takes it.
  const worker = new RunWorker(
    db,
    {
      concurrency: config.RUN_CONCURRENCY,
      pollingSeconds: config.RUN_POLL_SECONDS,
      heartbeatSeconds: config.RUN_HEARTBEAT_SECONDS,
      staleSeconds: config.RUN_STALE_SECONDS,
      expireSeconds: config.RUN_TIMEOUT_SECONDS,
      now: clock,
      dataDir: config.DATA_DIR,
      limits: { attributesPerStream: config.MAX_ATTRIBUTES_PER_STREAM, stageColumns: config.MAX_STAGE_COLUMNS, feedMaxBytes: config.FEED_MAX_BYTES },
      accountConcurrency: config.RUN_ACCOUNT_CONCURRENCY,
    },
    app.log,
  )
  await worker.startWhenReachable()
  app.decorate('runWorker', worker)
  // Exported files reach http destinations through a worker of their own, after the run: a slow
  // destination holds a push slot of its account, never a run slot.
  const outbound = createOutboundGuard({ allowPrivate: config.ALLOW_PRIVATE_DESTINATIONS, resolve: resolveHost })
  const pushes = new PushWorker(
    db,
    {
      concurrency: config.PUSH_CONCURRENCY,
      accountConcurrency: config.PUSH_ACCOUNT_CONCURRENCY,
      timeoutSeconds: config.PUSH_TIMEOUT_SECONDS,
      budgetSeconds: config.PUSH_BUDGET_SECONDS,
      pollingSeconds: config.RUN_POLL_SECONDS,
      dataDir: config.DATA_DIR,
      guard: outbound,
    },
    app.log,
  )
  pushes.start()
  app.addHook('onClose', () => pushes.stop())
  let scheduler: NodeJS.Timeout | undefined
  if (config.SCHEDULER_INTERVAL_SECONDS > 0) {
    const settings = { defaultTimeZone: config.DEFAULT_TZ, limits: { maxLines: config.MAX_SCHEDULE_LINES, maxChars: config.MAX_SCHEDULE_CHARS }, log: app.log }
    // A tick that outlasts the interval (it yields between batches) is not joined by another.
    let ticking = false
    scheduler = setInterval(() => {
      if (ticking) return
      ticking = true
      runSchedulerTick(db, worker.queue, settings, clock())
        .catch((error: unknown) => app.log.warn({ err: error }, 'scheduler tick failed'))
        .finally(() => {
          ticking = false
        })
    }, config.SCHEDULER_INTERVAL_SECONDS * 1000)
    scheduler.unref()
  }
  app.addHook('onClose', async () => {
    clearInterval(scheduler)
    await worker.stop()
  })

  // Uploads and product reads hold a connection as long as they take: each kind gets its share of
  // the pool, and each account its share of those.
  const uploadSlots = new ConnectionSlots(config.UPLOAD_CONCURRENCY, config.UPLOADS_PER_ACCOUNT, { noun: 'uploads', variable: 'UPLOADS_PER_ACCOUNT' })
  const readSlots = new ConnectionSlots(config.READ_CONCURRENCY, config.READS_PER_ACCOUNT, { noun: 'product reads', variable: 'READS_PER_ACCOUNT' })
  await app.register(healthRoutes, { db, uploadSlots, readSlots })
  // Feed files of the built-in destination: public, at unguessable URLs.
  await app.register(feedRoutes, { db, feedsDir: feedsDir(config.DATA_DIR) })
  const authLimit = new FailedAuthLimit(new MemoryFailedAuthStore(), config.AUTH_FAILURES_PER_MINUTE, clock)
  await app.register(platformPlugin, { db, config, runs: worker.queue, authLimit, outbound, readSlots })
  await app.register(streamPlugin, { prefix: config.STREAM_PREFIX, db, config, clock, rateLimits, authLimit, uploadSlots })

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ success: false, message: `No route ${request.method} ${request.url.split('?')[0]}` }),
  )
  return app
}

/** Fastify's hop-count form of trustProxy, which its types leave out: the nearest `hops` proxies. */
function trustedProxies(trust: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof trust === 'number' ? (_address, hop) => hop < trust : trust
}

function answerClientError(error: Error & { code?: string; rawPacket?: unknown }, socket: Duplex, streamPrefix: string): void {
  if (!socket.writable) return
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
  const message =
    status === 431
      ? 'The request line and headers are larger than 16 KB; a query parameter that long (a filter, say) cannot be valid'
      : `The request is not valid HTTP (${error.code ?? 'parse error'}); check its Content-Length and Transfer-Encoding`
  // Node's types call it a JSON form of a buffer; at run time it is the Buffer of what arrived.
  const received = Buffer.isBuffer(error.rawPacket) ? error.rawPacket.subarray(0, 2048).toString('latin1') : ''
  const path = /^[A-Z]+ (\S*)/.exec(received)?.[1] ?? ''
  const stream = path.startsWith(`${streamPrefix}/streams`)
  const title = statusTitle(status)
  const body = JSON.stringify(stream ? { errors: [{ status: String(status), title, detail: message }] } : { success: false, message })
  const type = stream ? 'application/vnd.api+json' : 'application/json; charset=utf-8'
  socket.end(`HTTP/1.1 ${status} ${title}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
}

function answerFrameworkError(error: FastifyError, url: string, reply: FastifyReply): void {
  const status = typeof error.statusCode === 'number' && error.statusCode < 500 ? error.statusCode : 400
  const message = error.code === 'FST_ERR_BAD_URL' ? 'The URL is not valid: a percent-encoded sequence does not decode to text' : error.message
  if (/^\/(platform|product|feeds)\//.test(url)) {
    void reply.code(status).send({ success: false, message })
    return
  }
  void reply
    .code(status)
    .header('content-type', 'application/vnd.api+json')
    .send({ errors: [{ status: String(status), title: statusTitle(status), detail: message }] })
}
