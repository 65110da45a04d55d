import { randomUUID } from 'node:crypto'
import { isUtf8 } from 'node:buffer'
import type { Readable } from 'node:stream'
import { AttributeNames, MAX_LINE_BYTES, RowError, RowReader, exceedsLineLimit, hasUnstorableCharacter } from '../catalog/row-rules.js'
import type { ConnectionSlots } from '../db/connection-slots.js'
import type { Db } from '../db/database.js'
import { inTransaction } from '../db/transaction.js'
import type { Batch, BatchKind, Stream } from '../db/schema.js'
import { BadRequestError, ForbiddenError, LockedError, UnsupportedMediaTypeError } from '../errors.js'
import { copyText, CopyWriter } from '../db/copy-writer.js'
import { decodedBody } from '../http/body-source.js'
import type { UploadDeadline } from './upload-deadline.js'
import { LineSplitter, type SplitItem } from './line-splitter.js'
import { saveReferencedPayload } from './referenced-payload.js'
import { feedsDisabledSite, getStream } from './streams.js'
import { StageCollector } from './upload-stage.js'
import { UploadSpool, type SpoolBudget } from './upload-spool.js'
import { claimContentType, emptyPayloadBatch, finishBatch, insertBatch, streamAttributeNames } from './batch-store.js'
import { recordEvent } from '../webhooks/outbox.js'
import { batchUploadedData } from '../webhooks/payloads.js'

export interface UploadRequest {
  accountId: string
  streamId: string
  kind: 'upsert' | 'delete'
  contentType: string | undefined
  contentEncoding: string | undefined
  body: Readable
  /** The request's time limit; aborts too when the client goes away. */
  deadline: UploadDeadline
  maxBytes: number
  /** Distinct attribute names the stream may use over all its uploads (MAX_ATTRIBUTES_PER_STREAM). */
  maxAttributes: number
  /** A slower body is cut off (UPLOAD_MIN_BYTES_PER_SECOND). */
  minBytesPerSecond: number
  /** The process's upload connections, shared fairly across accounts. */
  slots: ConnectionSlots
  /** Bytes of bodies received and waiting for their turn, per process and per account. */
  spool: SpoolBudget
  now: () => Date
  /** Hears of the upload once it committed (the metrics). */
  observer?: UploadObserver
}

export interface UploadResult {
  /** 202 for a stored batch; 422 for an empty payload, which stores nothing. */
  statusCode: 202 | 422
  batch: Batch
}

/**
 * Hears of each upload once its answer is final: a stored batch after its commit (202), or an empty
 * payload refused (422, nothing stored). The metrics count them; an upload that rolled back is not heard of.
 */
export interface UploadObserver {
  /** `bodyBytes`: the payload's bytes as decoded (after gzip), 0 for a delete without a body. */
  uploaded(result: UploadResult, bodyBytes: number): void
}

const NDJSON = 'application/x-ndjson'
const JSON_TYPE = 'application/json'

/**
 * Uploads (kind `upsert`) and NDJSON deletes (kind `delete`) become one batch each. The body is
 * received whole (decoded, within its limits) before the upload waits for its turn at a database
 * connection, so a slow body holds no connection and a refused one writes nothing.
 */
export function uploadProducts(db: Db, request: UploadRequest): Promise<UploadResult> {
  const { deadline, accountId } = request
  return deadline.run(async () => {
    const mediaType = request.contentType?.split(';')[0]?.trim().toLowerCase() ?? ''
    checkMediaType(await uploadableStream(db, accountId, request.streamId), request.kind, mediaType)
    const limits = { maxBytes: request.maxBytes, deadline, minBytesPerSecond: request.minBytesPerSecond }
    const spool = await UploadSpool.receive(decodedBody(request.body, request.contentEncoding, limits), request.spool, accountId)
    try {
      const result = await request.slots.run(accountId, deadline.signal, async () => {
        // Checked again: the stream may have been locked, disabled or deleted while the body arrived.
        const stream = await uploadableStream(db, accountId, request.streamId)
        checkMediaType(stream, request.kind, mediaType)
        return stream.type === 'referenced' && request.kind === 'upsert'
          ? await saveReferencedPayload(db, { stream, mediaType, chunks: spool.chunks(), deadline, now: request.now })
          : await saveChunkedRows(db, stream, request, mediaType, spool.chunks())
      })
      // Committed by now (or refused as empty): a batch that rolled back is never counted.
      request.observer?.uploaded(result, spool.bytes)
      return result
    } finally {
      await spool.release()
    }
  })
}

/** Deletes of one product or of every product: a batch without a body. */
export async function deleteProducts(
  db: Db,
  accountId: string,
  streamId: string,
  productId: string | undefined,
  now: Date,
  deadline: UploadDeadline,
  slots: ConnectionSlots,
  observer?: UploadObserver,
): Promise<Batch> {
  // Postgres text cannot hold these; uploaded rows get the control-character error for them.
  if (productId !== undefined && hasUnstorableCharacter(productId)) {
    throw new BadRequestError('productId: a product id cannot contain a NUL character (%00) or an unpaired surrogate')
  }
  return deadline.run(() =>
    slots.run(accountId, deadline.signal, async () => {
      const stream = await uploadableStream(db, accountId, streamId)
      const kind: BatchKind = productId === undefined ? 'delete_all' : 'delete'
      const collector = new StageCollector()
      collector.success()
      const batchId = randomUUID()
      const stored = await inTransaction(db, async (tx) => {
        await deadline.limit(tx.db)
        await insertBatch(tx.db, { batchId, stream, kind, contentType: null, now })
        if (productId !== undefined) {
          await tx.db.insertInto('batch_row').values({ batch_id: batchId, line_no: 1, account_id: accountId, product_id: productId, data: null }).execute()
        }
        const batch = await finishBatch(tx.db, batchId, collector.stage(now), 'uploaded')
        await recordEvent(tx, accountId, 'batch.uploaded', batchUploadedData(batch))
        deadline.commitPoint()
        return batch
      })
      observer?.uploaded({ statusCode: 202, batch: stored }, 0)
      return stored
    }),
  )
}

export async function uploadableStream(db: Db, accountId: string, streamId: string): Promise<Stream> {
  const stream = await getStream(db, accountId, streamId)
  if (stream.status === 'disabled') throw new ForbiddenError(`Stream ${stream.id} is disabled and accepts no data`)
  if (stream.status === 'locked' || stream.status === 'locked_upload') {
    throw new LockedError(`Stream ${stream.id} is ${stream.status} and accepts no uploads`)
  }
  if (await feedsDisabledSite(db, accountId, stream.id)) {
    throw new ForbiddenError(`Stream ${stream.id} feeds a disabled site and accepts no data`)
  }
  return stream
}

function checkMediaType(stream: Stream, kind: UploadRequest['kind'], mediaType: string): void {
  const accepted = kind === 'delete' || stream.type === 'chunked' ? [NDJSON] : [JSON_TYPE, NDJSON]
  if (!accepted.includes(mediaType)) {
    const sent = mediaType === '' ? 'no Content-Type' : `Content-Type ${mediaType}`
    throw new UnsupportedMediaTypeError(`A ${stream.type} stream accepts ${accepted.join(' or ')} here; the request has ${sent}`)
  }
  if (kind === 'upsert' && stream.content_type !== null && stream.content_type !== mediaType) {
    throw new UnsupportedMediaTypeError(
      `Stream ${stream.id} receives ${stream.content_type}; content types cannot be mixed within one stream (create a new stream instead)`,
    )
  }
}

async function saveChunkedRows(db: Db, stream: Stream, request: UploadRequest, mediaType: string, chunks: AsyncGenerator<Buffer>): Promise<UploadResult> {
  const batchId = randomUUID()
  const collector = new StageCollector()
  const kind: BatchKind = request.kind === 'delete' ? 'delete' : 'upsert'
  let lineNumber = 0
  const reader = new RowReader()
  const outcome = await inTransaction(db, async (tx) => {
    await request.deadline.limit(tx.db)
    if (kind === 'upsert') await claimContentType(tx.db, stream, mediaType)
    const known = kind === 'upsert' ? await streamAttributeNames(tx.db, stream) : []
    const names = new AttributeNames(new Set(known), request.maxAttributes)
    await insertBatch(tx.db, { batchId, stream, kind, contentType: kind === 'upsert' ? mediaType : null, now: request.now() })
    const copy = new CopyWriter(tx.client, 'COPY batch_row (batch_id, line_no, account_id, product_id, data) FROM STDIN')
    const prefix = `${batchId}\t`
    const accountField = `\t${stream.account_id}\t`
    const handleLine = (line: string) => {
      lineNumber++
      if (line.length > MAX_LINE_BYTES / 4 && exceedsLineLimit(Buffer.byteLength(line), line.endsWith('\r'))) {
        return collector.error(RowError.tooLarge, lineNumber, line)
      }
      const row = reader.read(line)
      if ('error' in row) return collector.error(row.error, lineNumber, line)
      const refused = kind === 'upsert' ? names.add(row.attributes) : undefined
      if (refused) return collector.error(refused, lineNumber, line)
      collector.success()
      copy.row(`${prefix}${lineNumber}${accountField}${copyText(row.productId)}\t${kind === 'upsert' ? copyText(row.data) : '\\N'}\n`)
    }
    const handle = (item: SplitItem) => {
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
    // An empty payload stores nothing: throwing rolls back the batch row inserted above.
    if (isEmptyPayload(collector)) throw EMPTY
    const status = collector.successCount === 0 ? 'failed' : 'uploaded'
    const columns = kind === 'upsert' ? [...names.names] : []
    const batch = await finishBatch(tx.db, batchId, collector.stage(request.now()), status, columns)
    await recordEvent(tx, stream.account_id, 'batch.uploaded', batchUploadedData(batch))
    // Whatever was written must not commit once the client has been told the request timed out.
    request.deadline.commitPoint()
    return batch
  }).catch((error: unknown) => {
    if (error === EMPTY) return 'empty' as const
    throw error
  })
  if (outcome === 'empty') return { statusCode: 422, batch: emptyPayloadBatch(stream, request.now()) }
  return { statusCode: 202, batch: outcome }
}

const EMPTY = Symbol('empty payload')

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
