import { isIP } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

// The only module that reads process.env: everything else receives a Config.
const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  DATABASE_URL: Type.Optional(Type.String({ minLength: 1 })),
  DATA_DIR: Type.String({ minLength: 1, default: './.data' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  DEFAULT_TZ: Type.String({ minLength: 1, default: 'UTC' }),
  DB_POOL_SIZE: Type.Integer({ minimum: 2, maximum: 200, default: 20 }),
  STREAM_PREFIX: Type.String({ pattern: '^(/[A-Za-z0-9._~-]+)*$', default: '' }),
  MAX_UPLOAD_BYTES: Type.Integer({ minimum: 1, default: 200 * 1024 * 1024 }),
  STREAM_REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 10_000 }),
  // The key that seals the credentials of file servers: 32 bytes, base64. Unset with the
  // embedded database: DATA_DIR/credentials.key, made on first use. Unset on a DATABASE_URL: none stored.
  CREDENTIALS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  // Keys of before a rotation, comma-separated: they open what they sealed until `credentials reseal`.
  CREDENTIALS_KEYS_PREVIOUS: Type.String({ default: '' }),
  // The activity log's entries are kept this long; the hourly cleanup removes older ones.
  ACTIVITY_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 365 }),
  // A request's Idempotency-Key answers its repeats this long; then the key is free again.
  IDEMPOTENCY_TTL_HOURS: Type.Number({ minimum: 0.01, maximum: 720, default: 24 }),
  // The proxies whose X-Forwarded-For is believed: off, a hop count, or their addresses (parsed below).
  TRUST_PROXY: Type.String({ default: 'false' }),
  AUTH_FAILURES_PER_MINUTE: Type.Integer({ minimum: 1, default: 30 }),
  SHUTDOWN_GRACE_SECONDS: Type.Number({ minimum: 1, maximum: 3600, default: 30 }),
  RATE_LIMIT_PRODUCTS: Type.Integer({ minimum: 1, default: 30 }),
  RATE_LIMIT_BATCHES: Type.Integer({ minimum: 1, default: 100 }),
  RATE_LIMIT_OTHER: Type.Integer({ minimum: 1, default: 5 }),
  PLATFORM_RATE_LIMIT: Type.Integer({ minimum: 1, default: 100 }),
  RUN_CONCURRENCY: Type.Integer({ minimum: 0, maximum: 64, default: 2 }),
  RUN_POLL_SECONDS: Type.Number({ minimum: 0.5, default: 2 }),
  RUN_HEARTBEAT_SECONDS: Type.Number({ minimum: 0.1, default: 10 }),
  RUN_STALE_SECONDS: Type.Number({ minimum: 0.5, default: 60 }),
  RUN_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 86_399, default: 6 * 3600 }),
  SCHEDULER_INTERVAL_SECONDS: Type.Number({ minimum: 0, default: 20 }),
  // Outbound requests (channel http destinations): loopback and private networks are refused
  // unless the operator allows them (local development, tests). Metadata services never are.
  ALLOW_PRIVATE_DESTINATIONS: Type.Boolean({ default: false }),
  // Pushes of exported files run outside the run slots, with their own bounds (docs/design.md 9).
  PUSH_CONCURRENCY: Type.Integer({ minimum: 0, maximum: 64, default: 4 }),
  // Pushes open at once, slow ones included: a push unanswered for a second leaves its PUSH_CONCURRENCY
  // slot to the next one (src/net/send-slots.ts); at this many, the one that waited longest is ended.
  PUSH_MAX_OPEN: Type.Integer({ minimum: 1, maximum: 1024, default: 16 }),
  PUSH_ACCOUNT_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 1 }),
  PUSH_TIMEOUT_SECONDS: Type.Number({ minimum: 0.1, maximum: 3600, default: 30 }),
  PUSH_BUDGET_SECONDS: Type.Number({ minimum: 0.1, maximum: 86_400, default: 300 }),
  // The wait before a failed push's second try, doubled before its third (within PUSH_BUDGET_SECONDS).
  PUSH_RETRY_BASE_SECONDS: Type.Number({ minimum: 0.01, maximum: 3600, default: 2 }),
  // Fetched sources: a feed URL's or an SFTP file's bounds. The file is fetched to local
  // disk first (at most SOURCE_MAX_BYTES, as sent), then read; the whole of it within the timeout.
  SOURCE_MAX_BYTES: Type.Integer({ minimum: 1, default: 2_147_483_648 }),
  SOURCE_MAX_UNPACKED_BYTES: Type.Integer({ minimum: 1, default: 8_589_934_592 }),
  SOURCE_MAX_PRODUCTS: Type.Integer({ minimum: 1, default: 5_000_000 }),
  SOURCE_FETCH_TIMEOUT_SECONDS: Type.Number({ minimum: 0.1, maximum: 86_400, default: 900 }),
  SOURCE_IDLE_SECONDS: Type.Number({ minimum: 0.1, maximum: 3600, default: 60 }),
  // Webhooks: subscriptions per account, http URLs only where allowed (https otherwise),
  // and a delivery worker of their own with per-account slots, so one slow receiver delays no other account.
  WEBHOOK_ALLOW_HTTP: Type.Boolean({ default: false }),
  MAX_WEBHOOKS_PER_ACCOUNT: Type.Integer({ minimum: 1, maximum: 1000, default: 20 }),
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 0, maximum: 256, default: 8 }),
  // Attempts open at once, slow ones included (as PUSH_MAX_OPEN for pushes).
  WEBHOOK_MAX_OPEN: Type.Integer({ minimum: 1, maximum: 4096, default: 64 }),
  WEBHOOK_ACCOUNT_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 2 }),
  WEBHOOK_TIMEOUT_SECONDS: Type.Number({ minimum: 0.1, maximum: 60, default: 10 }),
  WEBHOOK_POLL_SECONDS: Type.Number({ minimum: 0.1, default: 2 }),
  // The first retry's delay, doubled for each further one (with jitter), for up to WEBHOOK_RETRY_HOURS.
  WEBHOOK_RETRY_BASE_SECONDS: Type.Number({ minimum: 0.01, default: 30 }),
  WEBHOOK_RETRY_HOURS: Type.Number({ minimum: 0.001, maximum: 720, default: 24 }),
  // Failed attempts in a row after which a subscription is disabled (also when one delivery failed for good
  // after failing for WEBHOOK_RETRY_HOURS with no success in between).
  WEBHOOK_DISABLE_AFTER_FAILURES: Type.Integer({ minimum: 1, default: 50 }),
  // Tenant bounds and budgets of the catalog, uploads, reads and runs (docs/design.md section 9).
  MAX_ATTRIBUTES_PER_STREAM: Type.Integer({ minimum: 1, maximum: 10_000, default: 1000 }),
  MAX_STAGE_COLUMNS: Type.Integer({ minimum: 1, maximum: 1600, default: 1000 }),
  PRODUCT_READ_MAX_BYTES: Type.Integer({ minimum: 1024, default: 32 * 1024 * 1024 }),
  // One exported file: a wide stage times many rows multiplies, and the disk is shared.
  FEED_MAX_BYTES: Type.Integer({ minimum: 1024, default: 2 * 1024 * 1024 * 1024 }),
  // Where feed files are kept: in Postgres, where every server process finds them, or in
  // DATA_DIR/feeds of this host (one process only: another would not find the files).
  FEED_STORAGE: Type.Union([Type.Literal('postgres'), Type.Literal('local')], { default: 'postgres' }),
  PRODUCT_READ_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 30_000 }),
  READ_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 200, default: 4 }),
  READS_PER_ACCOUNT: Type.Integer({ minimum: 1, maximum: 1000, default: 2 }),
  UPLOAD_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 200, default: 8 }),
  UPLOADS_PER_ACCOUNT: Type.Integer({ minimum: 1, maximum: 1000, default: 2 }),
  // Uploads are received whole before they wait for a connection (docs/design.md 9): the bodies waiting
  // are bounded per account and per process, in memory and on the temporary disk, and so is the queue.
  UPLOAD_QUEUE_PER_ACCOUNT: Type.Integer({ minimum: 0, maximum: 100_000, default: 100 }),
  UPLOAD_SPOOL_DIR: Type.String({ default: '' }),
  UPLOAD_SPOOL_MEMORY_BYTES: Type.Integer({ minimum: 0, default: 64 * 1024 * 1024 }),
  UPLOAD_SPOOL_MAX_BYTES: Type.Integer({ minimum: 1, default: 2 * 1024 * 1024 * 1024 }),
  UPLOAD_SPOOL_ACCOUNT_MAX_BYTES: Type.Integer({ minimum: 1, default: 512 * 1024 * 1024 }),
  UPLOAD_MIN_BYTES_PER_SECOND: Type.Integer({ minimum: 0, default: 16 * 1024 }),
  RUN_ACCOUNT_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 1 }),
  // Objects one account may own (docs/design.md 9): far above any real catalog, low enough that one
  // tenant's listings and copies stay cheap for the service.
  MAX_PROJECTS_PER_ACCOUNT: Type.Integer({ minimum: 1, default: 1000 }),
  MAX_SITES_PER_ACCOUNT: Type.Integer({ minimum: 1, default: 2000 }),
  MAX_CHANNELS_PER_ACCOUNT: Type.Integer({ minimum: 1, default: 5000 }),
  MAX_TAGS_PER_ACCOUNT: Type.Integer({ minimum: 1, default: 50_000 }),
  MAX_DATA_SOURCES_PER_ACCOUNT: Type.Integer({ minimum: 1, default: 5000 }),
  // A site's import_schedule, checked before it is parsed: every scheduler pass evaluates it, and
  // every site listing carries it (2,000 sites at both limits list in about 5 MB).
  MAX_SCHEDULE_LINES: Type.Integer({ minimum: 1, default: 50 }),
  MAX_SCHEDULE_CHARS: Type.Integer({ minimum: 1, default: 2000 }),
  // GET /metrics wants `Authorization: Bearer <token>` when set; open when unset (a scraper on a
  // private network, or a proxy in front that guards it).
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 1 })),
  // The console (/console): the operator's sign-in token (no operator view when unset; at least 24
  // characters, it opens every account's runs and streams), and how long a session lasts.
  CONSOLE_OPERATOR_TOKEN: Type.Optional(Type.String({ minLength: 24 })),
  CONSOLE_SESSION_HOURS: Type.Number({ minimum: 0.01, maximum: 720, default: 12 }),
})

/** Fastify's trustProxy: nobody, the nearest N hops, or the proxies' addresses and CIDR ranges. */
export type TrustProxy = false | number | string[]

export type Config = Omit<Static<typeof ConfigSchema>, 'DATA_DIR' | 'TRUST_PROXY'> & { DATA_DIR: string; TRUST_PROXY: TrustProxy }

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key]
    if (value !== undefined && value !== '') raw[key] = value
  }
  const converted = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, raw))
  const errors = [...Value.Errors(ConfigSchema, converted)]
  if (errors.length > 0) {
    const detail = errors.map((e) => `${e.path.slice(1) || 'config'}: ${e.message}`).join('; ')
    throw new ConfigError(`Invalid configuration: ${detail}`)
  }
  const config = converted as Static<typeof ConfigSchema>
  if (config.UPLOAD_CONCURRENCY + config.READ_CONCURRENCY >= config.DB_POOL_SIZE) {
    throw new ConfigError(
      `Invalid configuration: UPLOAD_CONCURRENCY (${config.UPLOAD_CONCURRENCY}) and READ_CONCURRENCY (${config.READ_CONCURRENCY}) together must be ` +
        `smaller than DB_POOL_SIZE (${config.DB_POOL_SIZE}), so that uploads and reads never hold every connection`,
    )
  }
  if (config.UPLOAD_SPOOL_ACCOUNT_MAX_BYTES < config.MAX_UPLOAD_BYTES || config.UPLOAD_SPOOL_MAX_BYTES < config.UPLOAD_SPOOL_ACCOUNT_MAX_BYTES) {
    throw new ConfigError(
      `Invalid configuration: UPLOAD_SPOOL_ACCOUNT_MAX_BYTES (${config.UPLOAD_SPOOL_ACCOUNT_MAX_BYTES}) must be at least MAX_UPLOAD_BYTES ` +
        `(${config.MAX_UPLOAD_BYTES}), and UPLOAD_SPOOL_MAX_BYTES (${config.UPLOAD_SPOOL_MAX_BYTES}) at least UPLOAD_SPOOL_ACCOUNT_MAX_BYTES, ` +
        'so that the largest upload allowed can be received',
    )
  }
  if (!isKnownTimeZone(config.DEFAULT_TZ)) {
    throw new ConfigError(`Invalid configuration: DEFAULT_TZ: unknown time zone "${config.DEFAULT_TZ}"`)
  }
  return {
    ...config,
    DATA_DIR: path.resolve(config.DATA_DIR),
    UPLOAD_SPOOL_DIR: path.resolve(config.UPLOAD_SPOOL_DIR || path.join(tmpdir(), 'catalog-platform-uploads')),
    TRUST_PROXY: parseTrustProxy(config.TRUST_PROXY),
  }
}

// proxy-addr's names for the loopback, link-local and unique-local ranges.
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/**
 * TRUST_PROXY as Fastify takes it. `true` is refused: it would believe X-Forwarded-For from every
 * client, so anyone could pick the address that per-address limits and the logs see.
 */
export function parseTrustProxy(value: string): TrustProxy {
  const text = value.trim()
  if (text === '' || text.toLowerCase() === 'false') return false
  if (/^\d+$/.test(text)) return Number(text) === 0 ? false : Number(text)
  const fail = (why: string): never => {
    throw new ConfigError(
      `Invalid configuration: TRUST_PROXY: ${why}; set the number of proxy hops in front of the server (e.g. 1) or the proxies' addresses or CIDR ` +
        `ranges (e.g. 10.0.0.0/8,127.0.0.1), or leave it unset`,
    )
  }
  if (text.toLowerCase() === 'true') fail('"true" would trust X-Forwarded-For from every client')
  const entries = text.split(',').map((entry) => entry.trim())
  for (const entry of entries) {
    if (!isAddressOrRange(entry)) fail(`"${entry}" is neither an IP address, a CIDR range nor one of ${[...NAMED_RANGES].join(', ')}`)
  }
  return entries
}

function isAddressOrRange(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true
  const [address = '', prefix, extra] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || extra !== undefined) return false
  if (prefix === undefined) return true
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)
}

export function isKnownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
    return true
  } catch {
    return false
  }
}
