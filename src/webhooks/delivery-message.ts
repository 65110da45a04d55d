import type { ClaimedDelivery } from './delivery-store.js'
import { activeSecrets, signatureHeader } from './signatures.js'

export interface LinkBase {
  /** PUBLIC_URL: `links` and `feed_urls` given as paths become absolute under it; without it they stay paths from the service's root. */
  publicUrl?: string
  /** STREAM_PREFIX, before the paths of the stream interface. */
  streamPrefix: string
}

export interface Message {
  headers: Record<string, string>
  body: string
}

/**
 * The request of one attempt, as Standard Webhooks has it: the body `{type, timestamp, data}` (the
 * same on every attempt), `webhook-id` (the event's id), `webhook-timestamp` (this attempt's time,
 * in seconds, which receivers check against replays) and `webhook-signature` (one `v1,` signature
 * per valid secret).
 */
export function deliveryMessage(delivery: ClaimedDelivery, now: Date, base: LinkBase): Message {
  const body = JSON.stringify({
    type: delivery.event_type,
    timestamp: new Date(delivery.event_created_at).toISOString(),
    data: withAbsoluteLinks(delivery.payload, base),
  })
  const timestamp = Math.floor(now.getTime() / 1000)
  return {
    body,
    headers: {
      'user-agent': 'catalog-platform-webhooks/1',
      'webhook-id': delivery.event_id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(activeSecrets(delivery, now), delivery.event_id, timestamp, body),
    },
  }
}

function withAbsoluteLinks(data: Record<string, unknown>, { publicUrl, streamPrefix }: LinkBase): Record<string, unknown> {
  if (!publicUrl) return data
  const root = publicUrl.replace(/\/+$/, '')
  const absolute = (path: unknown) =>
    typeof path === 'string' && path.startsWith('/') ? `${root}${path.startsWith('/streams') ? streamPrefix : ''}${path}` : path
  const result = { ...data }
  if (typeof data.links === 'object' && data.links !== null) {
    result.links = Object.fromEntries(Object.entries(data.links).map(([name, path]) => [name, absolute(path)]))
  }
  if (Array.isArray(data.feed_urls)) result.feed_urls = data.feed_urls.map(absolute)
  return result
}
