import { expect } from 'vitest'
import type { StreamClient } from '../helpers/clients.js'
import type { TestContext } from '../helpers/test-app.js'

// What a stream holds in the database, where the interface cannot show it.

/** Rows stored for a stream's batches, in upload order. */
export async function storedRows(t: TestContext, streamId: string) {
  return t.db
    .selectFrom('batch_row')
    .innerJoin('batch', 'batch.id', 'batch_row.batch_id')
    .select(['batch_row.batch_id', 'batch_row.line_no', 'batch_row.product_id', 'batch_row.data'])
    .where('batch.stream_id', '=', streamId)
    .orderBy('batch.seq')
    .orderBy('batch_row.line_no')
    .execute()
}

/** Batches, rows (with or without a surviving batch) and referenced payload chunks of one stream. */
export async function storedCounts(t: TestContext, streamId: string): Promise<{ batches: number; rows: number; payloadChunks: number }> {
  const batchIds = t.db.selectFrom('batch').select('id').where('stream_id', '=', streamId)
  const [batches, rows, chunks] = await Promise.all([
    t.db
      .selectFrom('batch')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('stream_id', '=', streamId)
      .executeTakeFirstOrThrow(),
    // batch_row has no foreign key: count rows of every batch the stream ever had, and orphans of its account.
    t.db
      .selectFrom('batch_row')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where((eb) => eb.or([eb('batch_id', 'in', batchIds), eb('batch_id', 'not in', t.db.selectFrom('batch').select('id'))]))
      .executeTakeFirstOrThrow(),
    t.db
      .selectFrom('batch_payload')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('batch_id', 'in', batchIds)
      .executeTakeFirstOrThrow(),
  ])
  return { batches: Number(batches.n), rows: Number(rows.n), payloadChunks: Number(chunks.n) }
}

/** Asserts that a stream holds no batch and no row, seen through the API and the database. */
export async function expectNothingStored(t: TestContext, c: StreamClient, streamId: string): Promise<void> {
  expect(await c.batches(streamId)).toEqual([])
  expect(await storedCounts(t, streamId)).toEqual({ batches: 0, rows: 0, payloadChunks: 0 })
}
