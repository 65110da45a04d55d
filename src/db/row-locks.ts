import { sql } from 'kysely'
import type { DbHandle } from './database.js'

/** The tables of an account's resources that a change reads, then writes. */
export type ChangedTable = 'site' | 'channel' | 'project'

/**
 * Locks the account's row `id` of `table` until the transaction ends (FOR NO KEY UPDATE, which a
 * foreign key's check does not wait for). A change that reads a resource and then writes it takes
 * this first, then reads it again: concurrent changes of one resource take turns, each reading what
 * the one before wrote. Found by a differential run: two PUTs of one channel both answered 200 and
 * one of them was lost (each wrote back the whole row it had read), parallel DELETEs all answered
 * 200 and were each logged, and the activity log's "before" of a PUT was not what it replaced.
 * Returns whether the row is still there.
 */
export async function lockAccountRow(db: DbHandle, table: ChangedTable, accountId: string, id: string): Promise<boolean> {
  const { rows } = await sql`SELECT 1 FROM ${sql.table(table)} WHERE account_id = ${accountId} AND id = ${id} FOR NO KEY UPDATE`.execute(db)
  return rows.length > 0
}
