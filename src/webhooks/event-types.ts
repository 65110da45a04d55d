// The events an account can subscribe to. A subscription names some of them, or `all`,
// which also takes the types added later.

export const WEBHOOK_EVENT_TYPES = [
  'batch.uploaded',
  'batch.processed',
  'run.started',
  'run.succeeded',
  'run.failed',
  'export.finished',
  'export.held',
  'stream.status_changed',
  'channel.readiness_changed',
] as const

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** The one `events` entry that subscribes to every type. */
export const ALL_EVENTS = 'all'

export function isEventType(value: string): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value)
}
