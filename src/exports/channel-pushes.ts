import { sql } from 'kysely'
import type { Db, DbHandle } from '../db/database.js'
import { claimUnderLock, fairlyDueIds, heldByClaim, secondsFromNow, type ClaimLimits } from '../db/leased-claims.js'
import { inTransaction } from '../db/transaction.js'
import type { ChannelPush } from '../db/schema.js'
import { SiteErrorCode } from '../sites/run-failure.js'
import { addSiteError } from '../sites/site-errors.js'

// The delivery of exported files to http destinations, as rows: an export records what to send
// (recordChannelExport, src/exports/export-history.ts) and returns; the push worker
// (src/jobs/push-worker.ts) sends it outside the run (docs/design.md 9: a slow destination must not hold
// a run slot). Delivery is asynchronous: the export's history entry gets `uploaded` = 1 once every
// file reached every destination, and every push that did not make it is a site error 2003 of the
// run that exported it.

export type ClaimedPush = ChannelPush & { budget_left_ms: number }

export interface PushClaimLimits extends ClaimLimits {
  /** The run's total time for all its pushes, counted from the first one's claim. */
  budgetSeconds: number
}

// The transaction lock that serialises push claims (claimUnderLock).
const CLAIM_LOCK = 'catalog.channel_push.claim'

/**
 * Takes up to `limit` due pushes (a pending one whose back-off is over, or one whose lease ran out:
 * its process died) in one statement, fairly between accounts (fairlyDueIds). The first push of a
 * run claimed starts the run's push budget, which its other pushes share.
 */
export async function claimPushes(db: Db, limits: PushClaimLimits): Promise<ClaimedPush[]> {
  if (limits.limit <= 0) return []
  return claimUnderLock(db, CLAIM_LOCK, async (trx) => {
    const { rows } = await sql<ClaimedPush>`
      UPDATE channel_push c SET
        attempts = c.attempts + 1,
        locked_until = ${secondsFromNow(limits.leaseSeconds)},
        budget_ends_at = coalesce(
          c.budget_ends_at,
          (SELECT min(b.budget_ends_at) FROM channel_push b WHERE b.account_id = c.account_id AND b.pid = c.pid),
          ${secondsFromNow(limits.budgetSeconds)}
        )
      WHERE c.id IN (${fairlyDueIds('channel_push', limits)})
      RETURNING c.*, (extract(epoch from c.budget_ends_at - now()) * 1000)::float8 AS budget_left_ms`.execute(trx)
    return rows
  })
}

/** Only the claim that holds the push (pending under its lease) may change it: a process given up for dead that still ends is ignored. */
const ours = (db: DbHandle, push: ClaimedPush) => db.updateTable('channel_push').where(heldByClaim(push))

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
    .set({ next_attempt_at: secondsFromNow(delaySeconds), locked_until: null, note })
    .returning('next_attempt_at')
    .executeTakeFirst()
  return retried?.next_attempt_at
}

/** Hands the push back untried (this process is stopping): the interrupted attempt does not count. */
export async function releasePush(db: DbHandle, push: ClaimedPush): Promise<void> {
  await ours(db, push)
    .set({ attempts: sql`attempts - 1`, locked_until: null })
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

export interface PushAttemptRecord {
  startedAt: Date
  durationMs: number
  bytes: number | null
  remotePath: string | null
  outcome: 'delivered' | 'failed' | 'retrying'
  error: string | null
}

/** One attempt of a push, as the API and the console show it (GET …/channels/{id}/deliveries). */
export async function recordPushAttempt(db: DbHandle, push: ClaimedPush, attempt: PushAttemptRecord): Promise<void> {
  await db
    .insertInto('push_attempt')
    .values({
      account_id: push.account_id,
      push_id: push.id,
      channel_id: push.channel_id,
      attempt: push.attempts,
      started_at: attempt.startedAt,
      duration_ms: Math.round(attempt.durationMs),
      bytes: attempt.bytes,
      remote_path: attempt.remotePath,
      outcome: attempt.outcome,
      error: attempt.error,
    })
    .execute()
}
