import type { Config } from '../config.js'
import { BadRequestError } from '../errors.js'
import { OutboundRefusedError, type OutboundGuard } from '../net/outbound-guard.js'
import { checkText, excerpt } from '../input/text-input.js'
import { ALL_EVENTS, WEBHOOK_EVENT_TYPES, isEventType } from './event-types.js'

/** The operator's settings a subscription is checked against. */
export interface WebhookSettings {
  /** WEBHOOK_ALLOW_HTTP: plain http URLs are accepted (https always is). */
  allowHttp: boolean
  /** MAX_WEBHOOKS_PER_ACCOUNT. */
  maxPerAccount: number
  /** WEBHOOK_RETRY_HOURS: how long a delivery is tried, also after a manual retry. */
  retryHours: number
  /** The outbound guard: private, loopback, link-local and metadata targets are refused at save. */
  guard: OutboundGuard
}

export function webhookSettings(config: Config, guard: OutboundGuard): WebhookSettings {
  return {
    allowHttp: config.WEBHOOK_ALLOW_HTTP,
    maxPerAccount: config.MAX_WEBHOOKS_PER_ACCOUNT,
    retryHours: config.WEBHOOK_RETRY_HOURS,
    guard,
  }
}

/** A create or update body; null and absent mean "not given" (docs/compatibility.md). */
export interface WebhookInput {
  url?: string | null
  events?: unknown
  active?: boolean | null
  description?: string | null
}

export interface WebhookFields {
  url?: string
  events?: string[]
  active?: boolean
  description?: string
}

// A URL is stored, listed and sent with every attempt; browsers and proxies stop far below this.
export const MAX_URL_CHARS = 2048
export const MAX_DESCRIPTION_CHARS = 500
const MAX_EVENT_ENTRIES = 50

/**
 * The given fields of a body, checked; the URL also by the outbound guard (which may wait on DNS:
 * call it outside any transaction). Every message names its field.
 */
export async function readWebhookFields(input: WebhookInput, settings: WebhookSettings): Promise<WebhookFields> {
  const fields: WebhookFields = {}
  if (input.url !== null && input.url !== undefined) fields.url = await checkUrl(input.url, settings)
  if (input.events !== null && input.events !== undefined) fields.events = readEvents(input.events)
  if (input.active !== null && input.active !== undefined) fields.active = input.active
  if (input.description !== null && input.description !== undefined) {
    fields.description = checkText(input.description.trim(), 'description', MAX_DESCRIPTION_CHARS)
  }
  return fields
}

async function checkUrl(given: string, settings: WebhookSettings): Promise<string> {
  const url = checkText(given.trim(), 'url', MAX_URL_CHARS)
  if (url === '') throw new BadRequestError('url: must not be empty')
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new BadRequestError(`url: ${excerpt(url)} is not a valid absolute URL`)
  }
  if (parsed.protocol === 'http:' && !settings.allowHttp) {
    throw new BadRequestError(`url: must be an https URL; this server accepts plain http only where the operator allows it (WEBHOOK_ALLOW_HTTP)`)
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new BadRequestError(`url: must be an https URL`)
  if (parsed.username !== '' || parsed.password !== '') {
    throw new BadRequestError('url: credentials in the URL are not allowed; deliveries are signed, so the receiver can verify them instead')
  }
  if (parsed.hash !== '') throw new BadRequestError('url: must not have a fragment (#...)')
  try {
    await settings.guard.checkUrl(url)
  } catch (error) {
    if (!(error instanceof OutboundRefusedError)) throw error
    throw new BadRequestError(`url: ${excerpt(url)} is not allowed: ${error.reason}`)
  }
  return url
}

/** `"all"`, `["all"]` or a list of known event types, each once. */
export function readEvents(value: unknown): string[] {
  const list = typeof value === 'string' ? [value] : value
  const known = `${WEBHOOK_EVENT_TYPES.join(', ')}, or "${ALL_EVENTS}"`
  if (!Array.isArray(list)) throw new BadRequestError(`events: must be a list of event types (${known})`)
  if (list.length === 0) throw new BadRequestError(`events: must name at least one event type (${known})`)
  if (list.length > MAX_EVENT_ENTRIES) throw new BadRequestError(`events: at most ${MAX_EVENT_ENTRIES} entries`)
  const types = new Set<string>()
  for (const [i, entry] of list.entries()) {
    if (typeof entry !== 'string') throw new BadRequestError(`events[${i}]: must be a string (${known})`)
    const name = entry.trim()
    if (name !== ALL_EVENTS && !isEventType(name)) throw new BadRequestError(`events[${i}]: unknown event type "${excerpt(name)}"; known: ${known}`)
    types.add(name)
  }
  if (types.has(ALL_EVENTS)) return [ALL_EVENTS]
  return WEBHOOK_EVENT_TYPES.filter((type) => types.has(type))
}
