import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'
import { listBatches } from './batch-store.js'
import { getStream } from './streams.js'

/** A stream as the console's overview shows it: its catalog's size and its latest batch. */
/** Rows of a stream counted exactly up to this; more show as "over". */
export const ROW_COUNT_BOUND = 100_000

export interface StreamSummary {
  id: string
  name: string
  type: string
  status: string
  /** Rows of the stream's catalog, exact up to ROW_COUNT_BOUND, ROW_COUNT_BOUND + 1 above it. */
  rowCount: number
  lastBatch: { id: string; status: string; createdAt: Date; rowCount: number; errorCount: number } | null
}

// A stream holds at most 100 per account (docs/interface.md): one statement for all of them.
export async function streamSummaries(db: DbHandle, accountId: string): Promise<StreamSummary[]> {
  const { rows } = await sql<Record<string, unknown>>`
    SELECT s.id, s.name, s.type, s.status,
      -- Counted up to a bound: the overview of a catalog of millions stays a quick page.
      (SELECT count(*) FROM (
        SELECT 1 FROM stream_product sp WHERE sp.stream_id = s.id AND sp.account_id = s.account_id LIMIT ${ROW_COUNT_BOUND + 1}
      ) n) AS row_count,
      b.id AS batch_id, b.status AS batch_status, b.created_at AS batch_created_at, b.row_count AS batch_rows, b.error_count AS batch_errors
    FROM stream s
    LEFT JOIN LATERAL (
      SELECT id, status, created_at, row_count, error_count FROM batch
      WHERE stream_id = s.id AND account_id = s.account_id ORDER BY seq DESC LIMIT 1
    ) b ON true
    WHERE s.account_id = ${accountId} AND s.deleted_at IS NULL AND NOT s.source_owned
    ORDER BY s.id`.execute(db)
  return rows.map((row) => ({
    id: String(row.id),
    name: String(row.name),
    type: String(row.type),
    status: String(row.status),
    rowCount: Number(row.row_count),
    lastBatch: row.batch_id
      ? {
          id: String(row.batch_id),
          status: String(row.batch_status),
          createdAt: row.batch_created_at as Date,
          rowCount: Number(row.batch_rows),
          errorCount: Number(row.batch_errors),
        }
      : null,
  }))
}

/** A stream of the account with a page of its batches, newest first, and how many it has; another account's stream is not found. */
export async function streamWithBatches(db: DbHandle, accountId: string, streamId: string, page: { offset: number; limit: number }) {
  const stream = await getStream(db, accountId, streamId)
  const { batches, total } = await listBatches(db, accountId, stream.id, page.offset, page.limit)
  return { stream, batches, total }
}
