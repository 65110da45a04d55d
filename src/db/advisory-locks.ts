import { sql, type Transaction } from 'kysely'
import type { Database } from './schema.js'

/**
 * Transaction-scoped advisory locks. They take a Kysely `Transaction` (a `Tx`'s `db`), not any handle:
 * `pg_advisory_xact_lock` outside a transaction block is released as its statement ends, so a lock taken
 * on a pooled handle would serialise nothing and say so nowhere.
 */
export type LockedTransaction = Transaction<Database>

/** Holds `name`'s lock (a name of ours, hashed into the key space) until the transaction ends. */
export async function lockForTransaction(trx: LockedTransaction, name: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${name}))`.execute(trx)
}

/**
 * Holds the locks of `keys` in one family (`family` is a number of ours, so it meets no other lock) until
 * the transaction ends. Taken in the order of their hashed keys, so two transactions locking overlapping
 * sets cannot deadlock.
 */
export async function lockKeysForTransaction(trx: LockedTransaction, family: number, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return
  // Ordered in a subquery: Postgres takes the locks in the order the rows come.
  await sql`
    SELECT pg_advisory_xact_lock(${family}, k.key)
    FROM (SELECT DISTINCT hashtext(a) AS key FROM unnest(${keys}::text[]) AS a ORDER BY 1) AS k`.execute(trx)
}
