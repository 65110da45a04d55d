import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import { inTransaction } from '../db/transaction.js'
import { deleteEndedPushes } from '../exports/channel-pushes.js'
import { sweepFeedObjects } from '../feeds/postgres-feed-storage.js'
import { writeRecordedFiles } from '../feeds/feed-materialiser.js'
import type { FeedStorage } from '../feeds/feed-storage.js'
import { purgeWebhookHistory } from '../webhooks/webhook-upkeep.js'
import { purgeDeletedStreams } from '../streams/streams.js'
import { releaseBatchRows } from '../streams/batch-store.js'
import { deleteExpiredConsoleSessions } from '../accounts/console-sessions.js'
import { deleteActivityBefore } from '../activity/activity-store.js'
import { deleteExpiredKeys } from '../idempotency/idempotency-keys.js'

// Work that imports and deletes leave for later, so that neither waits for it: run hourly by every
// server process (each statement is idempotent, so two processes at once do no harm).

/**
 * Rows of batches applied more than `graceMinutes` ago that their import did not release (applied
 * by a version from before imports released them): the catalog has them now.
 */
export async function releaseAppliedBatchRows(db: Db, graceMinutes = 10): Promise<number> {
  let released = 0
  for (;;) {
    const batches = await db
      .selectFrom('batch')
      .select('id')
      .where('applied_at', 'is not', null)
      .where('rows_released', '=', false)
      .where('applied_at', '<', sql<Date>`now() - make_interval(mins => ${graceMinutes})`)
      .limit(50)
      .execute()
    if (batches.length === 0) return released
    const ids = batches.map((batch) => batch.id)
    await inTransaction(db, ({ db: trx }) => releaseBatchRows(trx, ids))
    released += ids.length
  }
}

/** Stage rows of deleted sites. */
export async function purgeDeletedSiteStages(db: Db): Promise<number> {
  const sites = await db.selectFrom('site_purge').select('site_id').limit(100).execute()
  for (const { site_id } of sites) {
    await inTransaction(db, async ({ db: trx }) => {
      await trx.deleteFrom('stage_product').where('site_id', '=', site_id).execute()
      await trx.deleteFrom('stage_change').where('site_id', '=', site_id).execute()
      await trx.deleteFrom('site_purge').where('site_id', '=', site_id).execute()
    })
  }
  return sites.length
}

export interface CleanupReport {
  streams: number
  batches: number
  sites: number
  pushes: number
  /** Feed files deleted from Postgres: removed an hour ago, or left unpublished by a writer that died. */
  feeds: number
  /** Webhook deliveries failed past their window while their subscription was off, and ended ones deleted after a week. */
  webhookDeliveries: number
  /** Console sessions past their end. */
  consoleSessions: number
  /** Activity entries older than ACTIVITY_RETENTION_DAYS. */
  activity: number
  /** Idempotency keys older than IDEMPOTENCY_TTL_HOURS. */
  idempotencyKeys: number
  /** Full feed files written that a process which stopped had left to write after their export. */
  recordedFiles: number
}

export interface CleanupOptions {
  now: Date
  /** How long an applied batch keeps its rows (the CLI's --grace-minutes). */
  graceMinutes?: number
  /** How long a webhook delivery is tried (WEBHOOK_RETRY_HOURS). */
  webhookWindowSeconds?: number
  /** How long activity entries are kept (ACTIVITY_RETENTION_DAYS). */
  activityRetentionDays?: number
  /** How long an idempotency key answers (IDEMPOTENCY_TTL_HOURS). */
  idempotencyTtlHours?: number
  /** The feed storage: full files an export recorded and nobody wrote are written into it. */
  feedStorage?: FeedStorage
}

/** Everything the hourly cleanup does, in order. */
export async function runCleanup(db: Db, options: CleanupOptions): Promise<CleanupReport> {
  const { now, graceMinutes = 10, webhookWindowSeconds = 24 * 3600, activityRetentionDays = 365, idempotencyTtlHours = 24 } = options
  const streams = await purgeDeletedStreams(db, now)
  const batches = await releaseAppliedBatchRows(db, graceMinutes)
  const sites = await purgeDeletedSiteStages(db)
  const pushes = await deleteEndedPushes(db)
  const feeds = await sweepFeedObjects(db)
  const webhooks = await purgeWebhookHistory(db, webhookWindowSeconds)
  const consoleSessions = await deleteExpiredConsoleSessions(db, now)
  const activity = await deleteActivityBefore(db, new Date(now.getTime() - activityRetentionDays * 86_400_000))
  const idempotencyKeys = await deleteExpiredKeys(db, new Date(now.getTime() - idempotencyTtlHours * 3_600_000))
  const webhookDeliveries = webhooks.expired + webhooks.deliveries
  // Five minutes: the process that recorded a file writes it right after, in seconds.
  const recordedFiles = options.feedStorage ? await writeRecordedFiles(db, options.feedStorage, { before: new Date(now.getTime() - 5 * 60_000) }) : 0
  return { streams, batches, sites, pushes, feeds, webhookDeliveries, consoleSessions, activity, idempotencyKeys, recordedFiles }
}
