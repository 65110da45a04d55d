import { sql, type Transaction } from 'kysely'
import type { Db } from '../db/database.js'
import { inTransaction, type Tx } from '../db/transaction.js'
import type { BatchKind, BatchStage, Database, StreamType } from '../db/schema.js'
import { AttributeNames } from '../catalog/row-rules.js'
import { isoSeconds } from '../streams/upload-stage.js'
import { releaseBatchRows } from '../streams/batch-store.js'
import { parseReferencedBatch } from './referenced-rows.js'
import { recordEvent } from '../webhooks/outbox.js'
import { batchProcessedData } from '../webhooks/payloads.js'

interface PendingBatch {
  id: string
  seq: string
  kind: BatchKind
  status: string
  row_count: number
  columns: string[]
  content_type: string | null
}

/** One applied batch as its processing stage ended. */
export interface ProcessedBatch {
  id: string
  kind: BatchKind
  status: 'processed' | 'failed'
  successCount: number
  errorCount: number
}

/** Applied batches by the status they end with, and each of them (in upload order). */
export interface AppliedBatches {
  processed: number
  failed: number
  each: ProcessedBatch[]
}

export interface AppliedStream {
  /** Rows of referenced payloads that failed to parse, over all applied batches. */
  failedRows: number
  batches: AppliedBatches
}

/** Which batches to apply and how: `run` names the import in the batches' events. */
export interface PendingBatchesRequest {
  streamId: string
  /** The newest batch uploaded before the import started: later ones wait for the next import. */
  upToSeq: string
  now: Date
  /** MAX_ATTRIBUTES_PER_STREAM, met by referenced payloads when their rows are first read. */
  maxAttributes: number
  run?: { pid: string; siteId: string }
}

type LockedStream = { id: string; account_id: string; type: StreamType; columns: string[]; source_owned: boolean }

/** What reading the pending batches found: each batch's processing stage, and the stream's attribute names after them. */
interface ReadBatches {
  stages: Map<string, BatchStage>
  columns: Set<string>
  failedRows: number
}

/**
 * Applies a stream's pending batches, those uploaded up to `upToSeq`, to its catalog: in upload order,
 * once, whichever site's import gets there first (the stream's row lock makes a second importer wait
 * and then find nothing pending). The applied batches' uploaded rows are deleted in the same
 * transaction. Commits on its own: the batches stay applied even if the stage built from them later
 * fails, and the next import builds from the catalog as it is.
 */
export async function applyPendingBatches(db: Db, request: PendingBatchesRequest): Promise<AppliedStream> {
  return inTransaction(db, async (tx) => {
    const none: AppliedStream = { failedRows: 0, batches: { processed: 0, failed: 0, each: [] } }
    const stream = await tx.db
      .selectFrom('stream')
      .select(['id', 'account_id', 'type', 'columns', 'source_owned'])
      .where('id', '=', request.streamId)
      .forUpdate()
      .executeTakeFirst()
    if (!stream) return none
    const pending = await pendingBatches(tx.db, request.streamId, request.upToSeq)
    if (pending.length === 0) return none
    const read = await readBatches(db, tx, { stream, pending, request })
    const lastSeq = await applyGroups(tx.db, stream, pending)
    const batches = await endBatches(tx, { stream, pending, stages: read.stages, request })
    await releaseBatchRows(
      tx.db,
      pending.map((batch) => batch.id),
    )
    await tx.db
      .updateTable('stream')
      .set({ columns: [...read.columns], applied_seq: lastSeq })
      .where('id', '=', stream.id)
      .execute()
    return { failedRows: read.failedRows, batches }
  })
}

function pendingBatches(trx: Transaction<Database>, streamId: string, upToSeq: string): Promise<PendingBatch[]> {
  return trx
    .selectFrom('batch')
    .select(['id', 'seq', 'kind', 'status', 'row_count', 'columns', 'content_type'])
    .where('stream_id', '=', streamId)
    .where('applied_at', 'is', null)
    .where('seq', '<=', upToSeq)
    .orderBy('seq')
    .execute()
}

/**
 * Each batch's processing stage, and the stream's attribute names as the batches leave them. A
 * referenced payload is parsed here, its rows first read, and its `columns` set from what it held.
 */
async function readBatches(
  db: Db,
  tx: Tx,
  { stream, pending, request }: { stream: LockedStream; pending: PendingBatch[]; request: PendingBatchesRequest },
): Promise<ReadBatches> {
  const read: ReadBatches = { stages: new Map(), columns: new Set(stream.columns), failedRows: 0 }
  for (const batch of pending) {
    // Deleting every row forgets the stream's attribute names: the names of the uploads after it
    // start a new set (the way out of the MAX_ATTRIBUTES_PER_STREAM cap).
    // A replace (a fetched source's whole file) does too: its names are the file's.
    if (batch.kind === 'delete_all' || batch.kind === 'replace') read.columns = new Set()
    if (stream.type === 'referenced' && batch.kind === 'upsert') {
      // Referenced payloads meet the per-stream cap here, when their rows are first read.
      const names = new AttributeNames(read.columns, request.maxAttributes)
      const parsed = await parseReferencedBatch(db, tx.client, { id: batch.id, contentType: batch.content_type }, stream.account_id, request.now, names)
      read.stages.set(batch.id, parsed.stage)
      batch.columns = parsed.columns
      read.failedRows += parsed.stage.errorCount
    } else {
      read.stages.set(batch.id, doneStage(batch.status === 'failed' ? 0 : batch.row_count, request.now))
    }
    for (const column of batch.columns) read.columns.add(column)
  }
  return read
}

/** Applies the batches group by group, each under a change sequence number of its own; returns the last. */
async function applyGroups(trx: Transaction<Database>, stream: LockedStream, pending: PendingBatch[]): Promise<string> {
  let lastSeq = '0'
  for (const group of consecutiveGroups(pending)) {
    const { rows } = await sql<{ seq: string }>`SELECT nextval('stream_change_seq')::text AS seq`.execute(trx)
    lastSeq = rows[0]?.seq ?? lastSeq
    await applyGroup(trx, stream.id, stream.account_id, group, lastSeq)
  }
  return lastSeq
}

/**
 * Marks each batch applied with the status it ends with (failed when none of its rows was taken)
 * and announces it (`batch.processed`), in upload order.
 */
async function endBatches(
  tx: Tx,
  { stream, pending, stages, request }: { stream: LockedStream; pending: PendingBatch[]; stages: Map<string, BatchStage>; request: PendingBatchesRequest },
): Promise<AppliedBatches> {
  const batches: AppliedBatches = { processed: 0, failed: 0, each: [] }
  for (const batch of pending) {
    const stage = stages.get(batch.id) ?? doneStage(0, request.now)
    const status = batch.status === 'failed' || (stage.successCount === 0 && stage.errorCount > 0) ? 'failed' : 'processed'
    batches[status]++
    batches.each.push({ id: batch.id, kind: batch.kind, status, successCount: stage.successCount, errorCount: stage.errorCount })
    const updated = await tx.db
      .updateTable('batch')
      .set({ applied_at: request.now, status, processing_stage: JSON.stringify(stage), error_count: sql`error_count + ${stage.errorCount}` })
      .where('id', '=', batch.id)
      .returningAll()
      .executeTakeFirstOrThrow()
    // A fetched source's batches belong to no stream of the interface: its fetch report tells of them.
    if (!stream.source_owned) await recordEvent(tx, stream.account_id, 'batch.processed', batchProcessedData(updated, request.run))
  }
  return batches
}

/** Runs of batches of one kind: the upserts between two deletes become one statement. */
function consecutiveGroups(batches: PendingBatch[]): PendingBatch[][] {
  const groups: PendingBatch[][] = []
  for (const batch of batches) {
    if (batch.status === 'failed') continue
    const last = groups.at(-1)
    if (last && last[0]?.kind === 'upsert' && batch.kind === 'upsert') last.push(batch)
    else groups.push([batch])
  }
  return groups
}

async function applyGroup(trx: Transaction<Database>, streamId: string, accountId: string, group: PendingBatch[], seq: string) {
  const kind = group[0]?.kind
  const ids = group.map((batch) => batch.id)
  if (kind === 'delete_all') {
    await sql`UPDATE stream_product SET data = NULL, changed_seq = ${seq} WHERE stream_id = ${streamId} AND data IS NOT NULL`.execute(trx)
    return
  }
  if (kind === 'replace') {
    // A fetched file, whole: its rows as an upsert (unchanged ones keep their changed_seq, so an
    // export compares only what changed), then every other row of the stream deleted.
    await upsertRows(trx, { streamId, accountId, group, seq })
    await sql`
      UPDATE stream_product sp SET data = NULL, changed_seq = ${seq}
      WHERE sp.stream_id = ${streamId} AND sp.data IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM batch_row br WHERE br.batch_id = ${group[0]?.id}::uuid AND br.product_id = sp.product_id)`.execute(trx)
    return
  }
  if (kind === 'delete') {
    await sql`
      UPDATE stream_product sp SET data = NULL, changed_seq = ${seq}
      FROM (SELECT DISTINCT product_id FROM batch_row WHERE batch_id = ANY(${ids}::uuid[])) AS gone
      WHERE sp.stream_id = ${streamId} AND sp.product_id = gone.product_id AND sp.data IS NOT NULL`.execute(trx)
    return
  }
  await upsertRows(trx, { streamId, accountId, group, seq })
}

async function upsertRows(
  trx: Transaction<Database>,
  { streamId, accountId, group, seq }: { streamId: string; accountId: string; group: PendingBatch[]; seq: string },
): Promise<void> {
  const ids = group.map((batch) => batch.id)
  // Most groups hold each id once, and then a plain INSERT ... ON CONFLICT is all it takes. A group
  // that repeats an id makes Postgres refuse to touch a row twice (21000); only then is the group
  // deduplicated, which sorts every row and costs half as much again as the insert.
  const upsert = (rows: ReturnType<typeof sql>) => sql`
    INSERT INTO stream_product (stream_id, product_id, account_id, data, changed_seq)
    SELECT ${streamId}::bigint, product_id, ${accountId}::bigint, data::jsonb, ${seq}::bigint FROM (${rows}) AS incoming
    ON CONFLICT (stream_id, product_id) DO UPDATE SET data = excluded.data, changed_seq = excluded.changed_seq
      WHERE stream_product.data IS DISTINCT FROM excluded.data`
  // The group's rows are found by batch id, unless they are most of the table (a full load): one
  // sequential read is then cheaper than a walk of the index.
  const { rows } = await sql<{ kept: string }>`
    SELECT greatest(reltuples, pg_relation_size(oid) / 600)::bigint AS kept FROM pg_class WHERE oid = 'batch_row'::regclass`.execute(trx)
  const groupRows = group.reduce((sum, batch) => sum + batch.row_count, 0)
  const wholeTable = groupRows * 4 > Number(rows[0]?.kept ?? 0)
  if (wholeTable) await sql`SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off`.execute(trx)
  await sql`SAVEPOINT plain_upsert`.execute(trx)
  try {
    await upsert(sql`SELECT product_id, data FROM batch_row WHERE batch_id = ANY(${ids}::uuid[])`).execute(trx)
    await sql`RELEASE SAVEPOINT plain_upsert`.execute(trx)
  } catch (error) {
    if ((error as { code?: string }).code !== '21000') throw error
    await sql`ROLLBACK TO SAVEPOINT plain_upsert`.execute(trx)
    await upsert(sql`
      SELECT DISTINCT ON (br.product_id) br.product_id, br.data
      FROM batch_row br JOIN batch b ON b.id = br.batch_id
      WHERE br.batch_id = ANY(${ids}::uuid[])
      ORDER BY br.product_id, b.seq DESC, br.line_no DESC`).execute(trx)
  }
  if (wholeTable) await sql`RESET enable_indexscan; RESET enable_bitmapscan`.execute(trx)
}

function doneStage(successCount: number, now: Date): BatchStage {
  return { completedAt: isoSeconds(now), status: 'success', successCount, errorCount: 0, errors: [] }
}
