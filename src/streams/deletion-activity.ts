import { recordActivity } from '../activity/activity-store.js'
import type { DbHandle } from '../db/database.js'
import type { BatchKind, Stream } from '../db/schema.js'

// Uploads stay out of the activity log (their batches are the record); deletions are in it.

export interface Deletion {
  stream: Pick<Stream, 'id' | 'account_id'>
  batchId: string
  kind: BatchKind
  /** The one product a DELETE of /products/{productId} names. */
  productId?: string
  /** Ids the batch deletes; null for every product of the stream. */
  rows: number | null
}

/** `products.deleted` for a batch of deletes, in the batch's transaction; other batches record nothing. */
export async function recordDeletion(db: DbHandle, { stream, batchId, kind, productId, rows }: Deletion): Promise<void> {
  if (kind !== 'delete' && kind !== 'delete_all') return
  const changes = {
    batch: [null, batchId] as [unknown, unknown],
    products: [null, kind === 'delete_all' ? 'all' : productId !== undefined ? [productId] : rows] as [unknown, unknown],
  }
  await recordActivity(db, { accountId: stream.account_id, action: 'products.deleted', target: { type: 'stream', id: stream.id }, changes })
}
