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
  DB_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  STREAM_PREFIX: Type.String({ pattern: '^(/[A-Za-z0-9._~-]+)*$', default: '' }),
  MAX_UPLOAD_BYTES: Type.Integer({ minimum: 1, default: 200 * 1024 * 1024 }),
  STREAM_REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 10_000 }),
  RATE_LIMIT_PRODUCTS: Type.Integer({ minimum: 1, default: 30 }),
  RATE_LIMIT_BATCHES: Type.Integer({ minimum: 1, default: 100 }),
  RATE_LIMIT_OTHER: Type.Integer({ minimum: 1, default: 5 }),
  RUN_CONCURRENCY: Type.Integer({ minimum: 0, maximum: 64, default: 2 }),
  RUN_POLL_SECONDS: Type.Number({ minimum: 0.5, default: 2 }),
  RUN_HEARTBEAT_SECONDS: Type.Number({ minimum: 0.1, default: 10 }),
  RUN_STALE_SECONDS: Type.Number({ minimum: 0.5, default: 60 }),
  RUN_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 86_399, default: 6 * 3600 }),
  SCHEDULER_INTERVAL_SECONDS: Type.Number({ minimum: 0, default: 20 }),
})

export type Config = Omit<Static<typeof ConfigSchema>, 'DATA_DIR'> & { DATA_DIR: string }

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
  if (!isKnownTimeZone(config.DEFAULT_TZ)) {
    throw new ConfigError(`Invalid configuration: DEFAULT_TZ: unknown time zone "${config.DEFAULT_TZ}"`)
  }
  return { ...config, DATA_DIR: path.resolve(config.DATA_DIR) }
}

export function isKnownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
    return true
  } catch {
    return false
  }
}
