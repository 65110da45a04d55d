import { sql, type CompiledQuery } from 'kysely'
import type pg from 'pg'
import { withRawTransaction, type Db } from '../db/database.js'
import type { BatchKind, BatchStage } from '../db/schema.js'
import { AttributeNames } from '../catalog/row-rules.js'
import { isoSeconds } from '../streams/upload-stage.js'
import { parseReferencedBatch } from './referenced-rows.js'

type Run = <R>(query: CompiledQuery<R>) => Promise<R[]>

interface PendingBatch {
  id: string
  seq: string
  kind: BatchKind
  status: string
  row_count: number
  columns: string[]
  content_type: string | null
}

export interface AppliedStream {
  /** Rows of referenced payloads that failed to parse, over all applied batches. */
  failedRows: number
}

/**
 * Applies a stream's pending batches, those uploaded up to `upToSeq`, to its catalog: in upload order,
 * once, whichever site's import gets there first (the stream's row lock makes a second importer wait
 * and then find nothing pending). Commits on its own: the batches stay applied even if the stage
 * built from them later fails, and the next import builds from the catalog as it is.
 */
export async function applyPendingBatches(db: Db, streamId: string, upToSeq: string, now: Date, maxAttributes: number): Promise<AppliedStream> {
  return withRawTransaction(db, async (client, run) => {
    const [stream] = await run(
      db.selectFrom('stream').select(['id', 'account_id', 'type', 'columns']).where('id', '=', streamId).forUpdate().compile(),
    )
    const applied: AppliedStream = { failedRows: 0 }
    if (!stream) return applied
    const pending = await run<PendingBatch>(
      db
        .selectFrom('batch')
        .select(['id', 'seq', 'kind', 'status', 'row_count', 'columns', 'content_type'])
        .where('stream_id', '=', streamId)
        .where('applied_at', 'is', null)
        .where('seq', '<=', upToSeq)
        .orderBy('seq')
        .compile(),
    )
    if (pending.length === 0) return applied

    const stages = new Map<string, BatchStage>()
    let columns = new Set(stream.columns)
    for (const batch of pending) {
      // Deleting every row forgets the stream's attribute names: the names of the uploads after it
      // start a new set (the way out of the MAX_ATTRIBUTES_PER_STREAM cap).
      if (batch.kind === 'delete_all') columns = new Set()
      if (stream.type === 'referenced' && batch.kind === 'upsert') {
        // Referenced payloads meet the per-stream cap here, when their rows are first read.
        const parsed = await parseReferencedBatch(db, client, { id: batch.id, contentType: batch.content_type }, stream.account_id, now, new AttributeNames(columns, maxAttributes))
        stages.set(batch.id, parsed.stage)
        batch.columns = parsed.columns
        applied.failedRows += parsed.stage.errorCount
      } else {
        stages.set(batch.id, doneStage(batch.status === 'failed' ? 0 : batch.row_count, now))
      }
      for (const column of batch.columns) columns.add(column)
    }

    let lastSeq = '0'
    for (const group of consecutiveGroups(pending)) {
      const [next] = await run<{ seq: string }>(sql<{ seq: string }>`SELECT nextval('stream_change_seq')::text AS seq`.compile(db))
      lastSeq = next?.seq ?? lastSeq
      await applyGroup(db, client, run, streamId, stream.account_id, group, lastSeq)
    }

    for (const batch of pending) {
      const stage = stages.get(batch.id) ?? doneStage(0, now)
      const status = batch.status === 'failed' || (stage.successCount === 0 && stage.errorCount > 0) ? 'failed' : 'processed'
      await run(
        db
          .updateTable('batch')
          .set({ applied_at: now, status, processing_stage: JSON.stringify(stage), error_count: sql`error_count + ${stage.errorCount}` })
          .where('id', '=', batch.id)
          .compile(),
      )
    }
    await run(db.updateTable('stream').set({ columns: [...columns], applied_seq: lastSeq }).where('id', '=', streamId).compile())
    return applied
  })
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

async function applyGroup(db: Db, client: pg.PoolClient, run: Run, streamId: string, accountId: string, group: PendingBatch[], seq: string) {
  const kind = group[0]?.kind
  const ids = group.map((batch) => batch.id)
  if (kind === 'delete_all') {
    await run(sql`UPDATE stream_product SET data = NULL, changed_seq = ${seq} WHERE stream_id = ${streamId} AND data IS NOT NULL`.compile(db))
    return
  }
  if (kind === 'delete') {
    await run(sql`
      UPDATE stream_product sp SET data = NULL, changed_seq = ${seq}
      FROM (SELECT DISTINCT product_id FROM batch_row WHERE batch_id = ANY(${ids}::uuid[])) AS gone
      WHERE sp.stream_id = ${streamId} AND sp.product_id = gone.product_id AND sp.data IS NOT NULL`.compile(db))
    return
  }
  // Most groups hold each id once, and then a plain INSERT ... ON CONFLICT is all it takes. A group
  // that repeats an id makes Postgres refuse to touch a row twice (21000); only then is the group
  // deduplicated, which sorts every row and costs half as much again as the insert.
  const upsert = (rows: ReturnType<typeof sql>) => sql`
    INSERT INTO stream_product (stream_id, product_id, account_id, data, changed_seq)
    SELECT ${streamId}::bigint, product_id, ${accountId}::bigint, data::jsonb, ${seq}::bigint FROM (${rows}) AS incoming
    ON CONFLICT (stream_id, product_id) DO UPDATE SET data = excluded.data, changed_seq = excluded.changed_seq
      WHERE stream_product.data IS DISTINCT FROM excluded.data`
  await client.query('SAVEPOINT plain_upsert')
  try {
    await run(upsert(sql`SELECT product_id, data FROM batch_row WHERE batch_id = ANY(${ids}::uuid[])`).compile(db))
    await client.query('RELEASE SAVEPOINT plain_upsert')
  } catch (error) {
    if ((error as { code?: string }).code !== '21000') throw error
    await client.query('ROLLBACK TO SAVEPOINT plain_upsert')
    await run(
      upsert(sql`
        SELECT DISTINCT ON (br.product_id) br.product_id, br.data
        FROM batch_row br JOIN batch b ON b.id = br.batch_id
        WHERE br.batch_id = ANY(${ids}::uuid[])
        ORDER BY br.product_id, b.seq DESC, br.line_no DESC`).compile(db),
    )
  }
}

function doneStage(successCount: number, now: Date): BatchStage {
  return { completedAt: isoSeconds(now), status: 'success', successCount, errorCount: 0, errors: [] }
}
