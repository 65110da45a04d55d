import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'

/** The first answer to a request with a key: what every repeat of it gets. */
export interface StoredAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

export type ClaimOutcome =
  | { kind: 'claimed'; claim: string }
  | { kind: 'replay'; answer: StoredAnswer }
  /** Another request with the key is running (or has just claimed it). */
  | { kind: 'running' }
  /** The key answered a different request (method, path, credential or body). */
  | { kind: 'mismatch' }

export interface KeyClaim {
  accountId: string
  key: string
  /** Method, path, credential and body, hashed: two requests are "the same" when it is. */
  fingerprint: string
  now: Date
  /** A key is kept this long after its first request (IDEMPOTENCY_TTL_HOURS); older, it is free again. */
  ttlMs: number
  /** A running claim whose process died is taken over after this long. */
  leaseMs: number
}

/**
 * Claims a key for a request, in one statement: a new key, a key past its time, or a running claim
 * of the same request whose holder died is taken; otherwise the key's row says what to answer. The
 * row is committed at once, so a concurrent request on any process sees it running.
 */
export async function claimKey(db: DbHandle, { accountId, key, fingerprint, now, ttlMs, leaseMs }: KeyClaim): Promise<ClaimOutcome> {
  const claim = randomUUID()
  const expired = new Date(now.getTime() - ttlMs)
  const leaseUntil = new Date(now.getTime() + leaseMs)
  // The outer SELECT reads the statement's snapshot: the row as it was when no claim was taken.
  const { rows } = await sql<{
    claimed: string | null
    fingerprint: string | null
    state: string | null
    status: number | null
    headers: Record<string, string> | null
    body: string | null
  }>`
    WITH taken AS (
      INSERT INTO idempotency_key AS k (account_id, key, fingerprint, claim, state, created_at, lease_until)
      VALUES (${accountId}, ${key}, ${fingerprint}, ${claim}, 'running', ${now}, ${leaseUntil})
      ON CONFLICT (account_id, key) DO UPDATE
        SET fingerprint = excluded.fingerprint, claim = excluded.claim, state = 'running', created_at = excluded.created_at,
            lease_until = excluded.lease_until, status = NULL, headers = NULL, body = NULL
        WHERE k.created_at <= ${expired} OR (k.state = 'running' AND k.lease_until <= ${now} AND k.fingerprint = excluded.fingerprint)
      RETURNING k.claim
    )
    SELECT (SELECT claim FROM taken) AS claimed, k.fingerprint, k.state, k.status, k.headers, k.body
    FROM (SELECT 1) AS one LEFT JOIN idempotency_key AS k ON k.account_id = ${accountId} AND k.key = ${key}
  `.execute(db)
  const row = rows[0]
  if (row?.claimed) return { kind: 'claimed', claim: row.claimed }
  // Claimed by a request that committed after this statement's snapshot: it is running now.
  if (!row || row.fingerprint === null) return { kind: 'running' }
  if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }
  if (row.state === 'done' && row.status !== null && row.body !== null) {
    return { kind: 'replay', answer: { status: row.status, headers: row.headers ?? {}, body: row.body } }
  }
  return { kind: 'running' }
}

/**
 * Stores the answer of a claimed key, with `db` the handle of the change's transaction: they commit
 * together. False when the claim is no longer this request's (taken over after its lease): the
 * caller rolls its change back rather than commit a change whose key answers another.
 */
export async function settleKey(db: DbHandle, target: { accountId: string; key: string; claim: string }, answer: StoredAnswer): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_key')
    .set({ state: 'done', status: answer.status, headers: JSON.stringify(answer.headers), body: answer.body })
    .where('account_id', '=', target.accountId)
    .where('key', '=', target.key)
    .where('claim', '=', target.claim)
    .where('state', '=', 'running')
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** Gives up a claim whose request changed nothing (refused, failed, empty): its retry runs again. */
export async function releaseKey(db: DbHandle, target: { accountId: string; key: string; claim: string }): Promise<void> {
  await db
    .deleteFrom('idempotency_key')
    .where('account_id', '=', target.accountId)
    .where('key', '=', target.key)
    .where('claim', '=', target.claim)
    .where('state', '=', 'running')
    .execute()
}

/** Keys past IDEMPOTENCY_TTL_HOURS, removed by the hourly cleanup (a claim treats them as free already). */
export async function deleteExpiredKeys(db: DbHandle, before: Date): Promise<number> {
  const result = await db.deleteFrom('idempotency_key').where('created_at', '<', before).executeTakeFirst()
  return Number(result.numDeletedRows)
}
