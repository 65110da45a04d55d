import { changesBetween, urlOrigin } from '../activity/activity-changes.js'
import { recordActivity } from '../activity/activity-store.js'
import type { DbHandle } from '../db/database.js'
import type { Webhook } from '../db/schema.js'

// A subscription in the activity log: its settings, never its secrets. The signing secrets show as
// `changed`, and so does its URL, which may carry the receiver's token in its path or query: the
// entry keeps its origin. The failure bookkeeping of deliveries is no person's change.
const SECRETS = ['secret', 'previous_secret', 'url']
const BOOKKEEPING = ['previous_secret_expires_at', 'consecutive_failures', 'failing_since']

function recorded(webhook: Webhook | null) {
  return webhook && { ...webhook, origin: urlOrigin(webhook.url) }
}

export async function recordWebhookChange(db: DbHandle, action: string, before: Webhook | null, after: Webhook | null): Promise<void> {
  const webhook = (after ?? before)!
  const changes = changesBetween(recorded(before), recorded(after), { secrets: SECRETS, omit: BOOKKEEPING })
  if (before && after && Object.keys(changes).length === 0) return
  await recordActivity(db, { accountId: webhook.account_id, action, target: { type: 'webhook', id: webhook.id }, changes })
}
