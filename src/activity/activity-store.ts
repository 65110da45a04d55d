import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'
import { sendWithCommit } from '../db/transaction.js'
import type { Changes } from './activity-changes.js'
import { currentRequestScope, type Actor } from './request-scope.js'

export interface ActivityTarget {
  /** What was changed: `site`, `channel`, `rule`, `stream`, `token`… */
  type: string
  id: string
  /** The site it belongs to, when it belongs to one: the site's activity lists it. */
  siteId?: string | null
}

export interface NewActivity {
  accountId: string
  /** `noun.verb`: `site.updated`, `rule.reordered`, `run.requested`. */
  action: string
  target: ActivityTarget
  changes?: Changes
}

export interface ActivityEntry {
  id: string
  occurredAt: Date
  accountId: string
  actor: Actor
  action: string
  target: { type: string; id: string; siteId: string | null }
  changes: Changes
  request: { id: string; address: string | null; userAgent: string | null; idempotencyKey: string | null } | null
}

/**
 * Records a change to an account, with the actor and request of the scope it runs in. Called with
 * the handle of the change's own transaction: the entry goes with its COMMIT, so that it commits
 * with the change or not at all.
 */
export async function recordActivity(db: DbHandle, entry: NewActivity): Promise<void> {
  await recordActivities(db, [entry])
}

/** Several entries of one change, in one statement, sent with the transaction's COMMIT (no round trip of its own). */
export async function recordActivities(db: DbHandle, entries: NewActivity[]): Promise<void> {
  if (entries.length > 0) await sendWithCommit(db, db.insertInto('activity').values(activityRow(entries)).compile())
}

function activityRow(entries: NewActivity[]) {
  const { actor, request } = currentRequestScope()
  return entries.map((entry) => ({
    account_id: entry.accountId,
    occurred_at: sql<Date>`now()`,
    actor_type: actor.type,
    actor_id: actor.id,
    actor_label: actor.label,
    action: entry.action,
    target_type: entry.target.type,
    target_id: entry.target.id,
    site_id: entry.target.siteId ?? null,
    changes: JSON.stringify(entry.changes ?? {}),
    request_id: request?.id ?? null,
    request_address: request?.address ?? null,
    request_user_agent: request?.userAgent ?? null,
    idempotency_key: request?.idempotencyKey ?? null,
  }))
}

/** Entries older than `before` (ACTIVITY_RETENTION_DAYS), removed by the hourly cleanup, a slice at a time. */
export async function deleteActivityBefore(db: DbHandle, before: Date): Promise<number> {
  let deleted = 0
  for (;;) {
    const result = await sql`
      DELETE FROM activity WHERE id IN (SELECT id FROM activity WHERE occurred_at < ${before} LIMIT 10000)
    `.execute(db)
    const count = Number(result.numAffectedRows ?? 0)
    deleted += count
    if (count < 10000) return deleted
  }
}
