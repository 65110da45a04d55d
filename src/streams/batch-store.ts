import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'
import type { Batch, BatchKind, BatchStage, BatchStatus, Stream } from '../db/schema.js'
import { NotFoundError, UnsupportedMediaTypeError } from '../errors.js'
import { isUuid } from '../db/ids.js'
import { getStream } from './streams.js'
import { isoSeconds } from './upload-stage.js'

// The writes below run in an upload's transaction (`tx.db`), on the connection of its COPY.

export interface NewBatch {
  batchId: string
  stream: Stream
  kind: BatchKind
  contentType: string | null
  now: Date
}

const PENDING_STAGE: BatchStage = { completedAt: '', status: 'success', successCount: 0, errorCount: 0, errors: [] }

export async function insertBatch(db: DbHandle, batch: NewBatch): Promise<void> {
  await db
    .insertInto('batch')
    .values({
      id: batch.batchId,
      account_id: batch.stream.account_id,
      stream_id: batch.stream.id,
      kind: batch.kind,
      status: 'uploaded',
      content_type: batch.contentType,
      upload_stage: JSON.stringify(PENDING_STAGE),
      processing_stage: null,
      created_at: batch.now,
    })
    .execute()
}

export async function finishBatch(db: DbHandle, batchId: string, stage: BatchStage, status: BatchStatus, columns: string[] = []): Promise<Batch> {
  return db
    .updateTable('batch')
    .set({ upload_stage: JSON.stringify(stage), status, error_count: stage.errorCount, row_count: stage.successCount, columns })
    .where('id', '=', batchId)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/**
 * The attribute names a stream uses already: those of its catalog and those of its batches still
 * waiting for an import (which join the catalog's when applied), counting from the last waiting
 * delete of every row, which forgets the names before it. A new upload counts its new names
 * against these (AttributeNames).
 */
export async function streamAttributeNames(db: DbHandle, stream: Stream): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    WITH reset AS (
      SELECT max(seq) AS seq FROM batch
      WHERE stream_id = ${stream.id} AND account_id = ${stream.account_id} AND applied_at IS NULL AND kind = 'delete_all' AND status <> 'failed'
    )
    SELECT unnest(columns) AS name FROM stream
    WHERE id = ${stream.id} AND account_id = ${stream.account_id} AND (SELECT seq FROM reset) IS NULL
    UNION
    SELECT unnest(columns) FROM batch
    WHERE stream_id = ${stream.id} AND account_id = ${stream.account_id} AND applied_at IS NULL AND status <> 'failed'
      AND seq > coalesce((SELECT seq FROM reset), 0)`.execute(db)
  return rows.map((row) => row.name)
}

/**
 * A stream keeps the content type of its first upload. The first upload claims it at the start of
 * its transaction: a racing first upload blocks on the row lock, then finds the claimed type.
 */
export async function claimContentType(db: DbHandle, stream: Stream, contentType: string): Promise<void> {
  if (stream.content_type === contentType) return
  const claimed = await db
    .updateTable('stream')
    .set({ content_type: contentType })
    .where('id', '=', stream.id)
    .where('content_type', 'is', null)
    .returning('id')
    .executeTakeFirst()
  if (claimed) return
  const current = await db.selectFrom('stream').select('content_type').where('id', '=', stream.id).executeTakeFirst()
  if (current?.content_type !== contentType) {
    throw new UnsupportedMediaTypeError(
      `Stream ${stream.id} receives ${current?.content_type ?? 'another content type'}; ` +
        'content types cannot be mixed within one stream (create a new stream instead)',
    )
  }
}

/** The document an empty upload answers with (docs/compatibility.md): a failed batch that is not stored. */
export function emptyPayloadBatch(stream: Stream, now: Date): Batch {
  const stage: BatchStage = {
    completedAt: isoSeconds(now),
    status: 'failure',
    successCount: 0,
    errorCount: 1,
    errors: [{ message: 'Empty Payload', occurrences: 1, example: { lineNumber: 1, value: '' } }],
  }
  return {
    id: randomUUID(),
    seq: '0',
    account_id: stream.account_id,
    stream_id: stream.id,
    kind: 'upsert',
    status: 'failed',
    content_type: null,
    upload_stage: stage,
    processing_stage: null,
    error_count: 1,
    row_count: 0,
    columns: [],
    applied_at: null,
    rows_released: false,
    created_at: now,
  }
}

export async function getBatch(db: DbHandle, accountId: string, streamId: string, batchId: string): Promise<Batch> {
  const stream = await getStream(db, accountId, streamId)
  const batch = isUuid(batchId)
    ? await db
        .selectFrom('batch')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('stream_id', '=', stream.id)
        .where('id', '=', batchId)
        .executeTakeFirst()
    : undefined
  if (!batch) throw new NotFoundError(`Batch ${batchId} not found in stream ${stream.id}`)
  return batch
}

/** Newest first. */
export async function listBatches(db: DbHandle, accountId: string, streamId: string, offset: number, limit: number) {
  const stream = await getStream(db, accountId, streamId)
  const ofStream = db.selectFrom('batch').where('account_id', '=', accountId).where('stream_id', '=', stream.id)
  const [batches, total] = await Promise.all([
    ofStream.selectAll().orderBy('seq', 'desc').offset(offset).limit(limit).execute(),
    ofStream.select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow(),
  ])
  return { batches, total: Number(total.count) }
}

/**
 * Deletes the uploaded rows (and referenced payloads) of applied batches: the stream's catalog has
 * them now, and nothing reads them again. Run in the transaction that applies them, so that an
 * upload weighs on disk only until its import, and by the hourly cleanup for batches
 * applied before that.
 */
export async function releaseBatchRows(db: DbHandle, batchIds: string[]): Promise<void> {
  if (batchIds.length === 0) return
  await db.deleteFrom('batch_row').where('batch_id', 'in', batchIds).execute()
  await db.deleteFrom('batch_payload').where('batch_id', 'in', batchIds).execute()
  await db.updateTable('batch').set({ rows_released: true }).where('id', 'in', batchIds).execute()
}
