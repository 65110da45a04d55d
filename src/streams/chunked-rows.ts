import { randomUUID } from 'node:crypto'
import { isUtf8 } from 'node:buffer'
import type pg from 'pg'
import { AttributeNames, MAX_LINE_BYTES, RowError, RowReader, exceedsLineLimit } from '../catalog/row-rules.js'
import { copyText, CopyWriter } from '../db/copy-writer.js'
import type { Db, DbHandle } from '../db/database.js'
import type { Batch, Stream } from '../db/schema.js'
import { inTransaction, type Tx } from '../db/transaction.js'
import { recordEvent } from '../webhooks/outbox.js'
import { settleRequestClaim } from '../activity/request-scope.js'
import { recordDeletion } from './deletion-activity.js'
import { batchUploadedData } from '../webhooks/payloads.js'
import { claimContentType, emptyPayloadBatch, finishBatch, insertBatch, streamAttributeNames } from './batch-store.js'
import { LineSplitter, type SplitItem } from './line-splitter.js'
import type { UploadDeadline } from './upload-deadline.js'
import type { UploadResult } from './upload-result.js'
import { StageCollector } from './upload-stage.js'

/** An NDJSON upload or delete of a chunked stream, its body received whole. */
export interface ChunkedUpload {
  stream: Stream
  kind: 'upsert' | 'delete'
  mediaType: string
  chunks: AsyncGenerator<Buffer>
  deadline: UploadDeadline
  /** Distinct attribute names the stream may use over all its uploads (MAX_ATTRIBUTES_PER_STREAM). */
  maxAttributes: number
  now: () => Date
}

/** The batch being written: its row, inserted, and the attribute names its rows add. */
interface OpenBatch {
  batchId: string
  kind: ChunkedUpload['kind']
  accountId: string
  names: AttributeNames
}

/**
 * Saves the body's lines as one batch: each valid line a `batch_row` (by COPY), each bad one an
 * error counted in the batch's stage. An empty payload is rolled back and stores nothing.
 */
export function saveChunkedRows(db: Db, upload: ChunkedUpload): Promise<UploadResult> {
  return inTransaction(db, async (tx): Promise<UploadResult> => {
    await upload.deadline.limit(tx.db)
    const batch = await openBatch(tx.db, upload)
    const collector = await copyRows(tx.client, batch, upload.chunks)
    if (isEmptyPayload(collector)) {
      // Nothing to keep: the batch row inserted above goes with the rollback.
      tx.rollbackOnly()
      return { outcome: 'empty', batch: emptyPayloadBatch(upload.stream, upload.now()) }
    }
    return { outcome: 'accepted', batch: await closeBatch(tx, batch, collector, upload) }
  })
}

async function openBatch(trx: DbHandle, { stream, kind, mediaType, maxAttributes, now }: ChunkedUpload): Promise<OpenBatch> {
  const batchId = randomUUID()
  if (kind === 'upsert') await claimContentType(trx, stream, mediaType)
  const known = kind === 'upsert' ? await streamAttributeNames(trx, stream) : []
  const names = new AttributeNames(new Set(known), maxAttributes)
  await insertBatch(trx, { batchId, stream, kind, contentType: kind === 'upsert' ? mediaType : null, now: now() })
  return { batchId, kind, accountId: stream.account_id, names }
}

/** Splits the body into lines and copies the valid ones into `batch_row`; returns their tally. */
async function copyRows(client: pg.PoolClient, batch: OpenBatch, chunks: AsyncGenerator<Buffer>): Promise<StageCollector> {
  const collector = new StageCollector()
  const copy = new CopyWriter(client, 'COPY batch_row (batch_id, line_no, account_id, product_id, data) FROM STDIN')
  const handle = splitItemHandler(batch, collector, (row) => copy.row(row))
  const splitter = new LineSplitter()
  try {
    for await (const chunk of chunks) {
      splitter.push(chunk, handle)
      await copy.flushIfFull()
    }
    splitter.end(handle)
    await copy.finish()
  } catch (error) {
    copy.abort(error as Error)
    throw error
  }
  return collector
}

/** Turns each item of the line splitter into COPY rows (`write`) or errors counted in `collector`. */
function splitItemHandler(batch: OpenBatch, collector: StageCollector, write: (row: string) => void): (item: SplitItem) => void {
  const reader = new RowReader()
  const prefix = `${batch.batchId}\t`
  const accountField = `\t${batch.accountId}\t`
  let lineNumber = 0
  const handleLine = (line: string) => {
    lineNumber++
    if (line.length > MAX_LINE_BYTES / 4 && exceedsLineLimit(Buffer.byteLength(line), line.endsWith('\r'))) {
      return collector.error(RowError.tooLarge, lineNumber, line)
    }
    const row = reader.read(line)
    if ('error' in row) return collector.error(row.error, lineNumber, line)
    const refused = batch.kind === 'upsert' ? batch.names.add(row.attributes) : undefined
    if (refused) return collector.error(refused, lineNumber, line)
    collector.success()
    write(`${prefix}${lineNumber}${accountField}${copyText(row.productId)}\t${batch.kind === 'upsert' ? copyText(row.data) : '\\N'}\n`)
  }
  return (item) => {
    if ('oversizedHead' in item) {
      lineNumber++
      return collector.error(RowError.tooLarge, lineNumber, item.oversizedHead.toString('utf8'))
    }
    if (isUtf8(item.block)) {
      for (const line of item.block.toString('utf8').split('\n')) handleLine(line)
      return
    }
    for (const line of splitBuffer(item.block)) {
      // Size first: whether an over-long line is seen whole here or cut off by the splitter
      // depends on chunk boundaries, and its message must not.
      if (exceedsLineLimit(line.length, line[line.length - 1] === 13)) collector.error(RowError.tooLarge, ++lineNumber, line.toString('utf8'))
      else if (isUtf8(line)) handleLine(line.toString('utf8'))
      else collector.error(RowError.controlCharacter, ++lineNumber, line.toString('utf8'))
    }
  }
}

/** Records the batch's stage and columns and its `batch.uploaded` event. */
async function closeBatch(tx: Tx, batch: OpenBatch, collector: StageCollector, upload: ChunkedUpload): Promise<Batch> {
  const { deadline, now } = upload
  const status = collector.successCount === 0 ? 'failed' : 'uploaded'
  const columns = batch.kind === 'upsert' ? [...batch.names.names] : []
  const finished = await finishBatch(tx.db, batch.batchId, collector.stage(now()), status, columns)
  await recordEvent(tx, batch.accountId, 'batch.uploaded', batchUploadedData(finished))
  await recordDeletion(tx.db, { stream: upload.stream, batchId: batch.batchId, kind: batch.kind, rows: collector.successCount })
  await settleRequestClaim(tx, { outcome: 'accepted', batch: finished } satisfies UploadResult)
  // Whatever was written must not commit once the client has been told the request timed out.
  deadline.commitPoint()
  return finished
}

/** A body with no line that holds anything (nothing, or only newlines and blanks) is an empty payload. */
function isEmptyPayload(collector: StageCollector): boolean {
  return collector.successCount === 0 && collector.errorCount === collector.countOf(RowError.emptyLine)
}

function splitBuffer(block: Buffer): Buffer[] {
  const lines: Buffer[] = []
  let start = 0
  for (let newline = block.indexOf(10); newline !== -1; newline = block.indexOf(10, start)) {
    lines.push(block.subarray(start, newline))
    start = newline + 1
  }
  lines.push(block.subarray(start))
  return lines
}
