import { sql } from 'kysely'
import type { Db, DbHandle } from '../db/database.js'
import { lockForTransaction } from '../db/advisory-locks.js'
import { inTransaction } from '../db/transaction.js'
import type { Channel, ChannelPush, Site } from '../db/schema.js'
import { SiteErrorCode } from '../sites/run-failure.js'
import { addSiteError } from '../sites/site-errors.js'
import type { ChannelExportResult } from './export-channel.js'
import { feedUrl } from '../feeds/feed-urls.js'
import { recordEvent } from '../webhooks/outbox.js'
import { exportFinishedData } from '../webhooks/payloads.js'

// The delivery of exported files to http destinations, as rows: an export records what to send
// and returns; the push worker sends it outside the run (DESIGN.md 9: a slow destination must not
// hold a run slot). Delivery is asynchronous: the export's history entry gets `uploaded` = 1 once
// every file reached every destination, and every push that did not make it is a site error 2003
// of the run that exported it.

export interface ExportRecord {
  site: Site
  channel: Channel
  pid: string
  start: Date
  end: Date
  result: ChannelExportResult
}

/** Writes the history entry of a successful export and queues its pushes; returns how many. */
export async function recordChannelExport(db: Db, { site, channel, pid, start, end, result }: ExportRecord): Promise<number> {
  return inTransaction(db, async (tx) => {
    const trx = tx.db
    const destinations = await trx
      .selectFrom('channel_destination')
      .select(['id', 'url'])
      .where('account_id', '=', site.account_id)
      .where('channel_id', '=', channel.id)
      .where('kind', '=', 'http')
      .where('active', '=', true)
      .orderBy('id')
      .execute()
    const pushes = destinations.flatMap((destination) => result.files.map((file) => ({ destination, file })))
    const { counts } = result
    const entry = await trx
      .insertInto('channel_export')
      .values({
        account_id: site.account_id,
        site_id: site.id,
        channel_id: channel.id,
        pid,
        export_start: start,
        export_time: end,
        process_status: 'success',
        product_count: counts.now,
        product_count_now: counts.now,
        product_count_previous: counts.previous,
        product_count_new: counts.new,
        product_count_modified: counts.modified,
        product_count_deleted: counts.deleted,
        product_count_unchanged: counts.unchanged,
        product_count_skipped: 0,
        uploaded: pushes.length === 0 ? 1 : 0,
      })
      .returningAll()
      .executeTakeFirstOrThrow()
    // Announced with the history entry: the feed URLs as paths, absolute under PUBLIC_URL when delivered.
    const feed = await trx
      .selectFrom('channel_destination')
      .select('token')
      .where('account_id', '=', site.account_id)
      .where('channel_id', '=', channel.id)
      .where('kind', '=', 'feed')
      .where('active', '=', true)
      .executeTakeFirst()
    const feedUrls = feed?.token ? result.files.map((file) => feedUrl('', feed.token ?? '', file.filename)) : []
    await recordEvent(tx, site.account_id, 'export.finished', exportFinishedData(entry, feedUrls))
    if (pushes.length > 0) {
      await trx
        .insertInto('channel_push')
        .values(
          pushes.map(({ destination, file }) => ({
            account_id: site.account_id,
            site_id: site.id,
            channel_id: channel.id,
            export_id: entry.id,
            pid,
            url: destination.url ?? '',
            storage_key: file.storageKey,
            filename: file.filename,
            content_type: file.contentType,
            locked_until: null,
            budget_ends_at: null,
            note: null,
            finished_at: null,
          })),
        )
        .execute()
    }
    return pushes.length
  })
}

export type ClaimedPush = ChannelPush & { budget_left_ms: number }

export interface ClaimLimits {
  /** How long a claim holds before another process may take the push again. */
  leaseSeconds: number
  /** Pushes of one account in flight at once, across every process. */
  accountConcurrency: number
  /** The run's total time for all its pushes, counted from the first one's claim. */
  budgetSeconds: number
}

// Claims are serialised by this lock: the per-account cap counts the running pushes, and two claims
// at the same moment in two processes would each count without the other's.
const CLAIM_LOCK = 'catalog.channel_push.claim'

/**
 * Takes the next due push (a pending one whose backoff is over, or a running one whose lease ran
 * out: its process died) of an account below its cap, in one statement: of the accounts with fewer
 * pushes in flight (across every process) first, then the oldest.
 */
export async function claimPush(db: Db, limits: ClaimLimits): Promise<ClaimedPush | undefined> {
  return inTransaction(db, async ({ db: trx }) => {
    await lockForTransaction(trx, CLAIM_LOCK)
    const { rows } = await sql<ClaimedPush>`
      UPDATE channel_push c SET
        status = 'running',
        attempts = c.attempts + 1,
        locked_until = now() + make_interval(secs => ${limits.leaseSeconds}),
        budget_ends_at = coalesce(
          c.budget_ends_at,
          (SELECT min(b.budget_ends_at) FROM channel_push b WHERE b.account_id = c.account_id AND b.pid = c.pid),
          now() + make_interval(secs => ${limits.budgetSeconds})
        )
      WHERE c.id = (
        SELECT p.id FROM channel_push p
        CROSS JOIN LATERAL (
          SELECT count(*) AS busy FROM channel_push r
          WHERE r.account_id = p.account_id AND r.status = 'running' AND r.locked_until >= now()
        ) flight
        WHERE ((p.status = 'pending' AND p.run_at <= now()) OR (p.status = 'running' AND p.locked_until < now()))
          AND flight.busy < ${limits.accountConcurrency}
        ORDER BY flight.busy, p.run_at, p.id
        LIMIT 1
        FOR UPDATE OF p SKIP LOCKED
      )
      RETURNING c.*, (extract(epoch from c.budget_ends_at - now()) * 1000)::float8 AS budget_left_ms`.execute(trx)
    return rows[0]
  })
}

/** Only the claim that holds the push may change it: a process given up for dead that still ends is ignored. */
const ours = (db: DbHandle, push: ClaimedPush) =>
  db
    .updateTable('channel_push')
    .where('account_id', '=', push.account_id)
    .where('id', '=', push.id)
    .where('status', '=', 'running')
    .where('attempts', '=', push.attempts)

/** A newer export of the channel replaced the file: this push has nothing left to send. */
export async function isFileCurrent(db: DbHandle, push: ClaimedPush): Promise<boolean> {
  const file = await db
    .selectFrom('feed_file')
    .select('id')
    .where('account_id', '=', push.account_id)
    .where('channel_id', '=', push.channel_id)
    .where('storage_key', '=', push.storage_key)
    .executeTakeFirst()
  return file !== undefined
}

/** Another attempt after `delaySeconds`; returns its time (none when the claim no longer held the push). */
export async function retryPush(db: DbHandle, push: ClaimedPush, delaySeconds: number, note: string): Promise<Date | undefined> {
  const retried = await ours(db, push)
    .set({ status: 'pending', run_at: sql`now() + make_interval(secs => ${delaySeconds})`, locked_until: null, note })
    .returning('run_at')
    .executeTakeFirst()
  return retried?.run_at
}

/** Hands the push back untried (this process is stopping): the interrupted attempt does not count. */
export async function releasePush(db: DbHandle, push: ClaimedPush): Promise<void> {
  await ours(db, push)
    .set({ status: 'pending', attempts: sql`attempts - 1`, locked_until: null })
    .execute()
}

/**
 * Ends a push. One that did not deliver is a site error 2003 of the run that exported it (`message`
 * says why); when it was the export's last push, the history entry learns whether all arrived.
 */
export async function finishPush(db: Db, push: ClaimedPush, status: 'done' | 'failed' | 'skipped', message: string | null): Promise<void> {
  await inTransaction(db, async ({ db: trx }) => {
    const ended = await ours(trx, push)
      .set({ status, note: message, locked_until: null, finished_at: sql`now()` })
      .executeTakeFirst()
    if (ended.numUpdatedRows === 0n) return
    if (status !== 'done' && message !== null) {
      await addSiteError(trx, {
        accountId: push.account_id,
        siteId: push.site_id,
        pid: push.pid,
        code: SiteErrorCode.destinationFailed,
        message,
        data: { channel_id: push.channel_id, filename: push.filename, url: push.url, attempts: push.attempts },
      })
    }
    await trx
      .updateTable('channel_export')
      .set({ uploaded: 1 })
      .where('account_id', '=', push.account_id)
      .where('id', '=', push.export_id)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('channel_push')
              .select('id')
              .where('account_id', '=', push.account_id)
              .where('export_id', '=', push.export_id)
              .where('status', '<>', 'done'),
          ),
        ),
      )
      .execute()
  })
}

/** Ended pushes, a week after they ended: the history entry and the site errors keep their outcome. */
export async function deleteEndedPushes(db: Db, olderThanDays = 7): Promise<number> {
  const deleted = await db
    .deleteFrom('channel_push')
    .where('status', 'in', ['done', 'failed', 'skipped'])
    .where('finished_at', '<', sql<Date>`now() - make_interval(days => ${olderThanDays})`)
    .executeTakeFirst()
  return Number(deleted.numDeletedRows)
}
