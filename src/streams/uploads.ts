import { createHash, randomUUID } from 'node:crypto'
import type { Readable } from 'node:stream'
import { hasUnstorableCharacter } from '../input/text-input.js'
import { SlotsFullError, type ConnectionSlots } from '../db/connection-slots.js'
import type { Db } from '../db/database.js'
import { inTransaction } from '../db/transaction.js'
import type { Batch, BatchKind, Stream } from '../db/schema.js'
import { BadRequestError, ForbiddenError, LockedError, ServiceBusyError, UnsupportedMediaTypeError } from '../errors.js'
import { decodedBody } from '../http/body-source.js'
import { digestingChunks } from '../http/request-digest.js'
import { beginRequestClaim, requestHasClaim, settleRequestClaim } from '../activity/request-scope.js'
import { recordDeletion } from './deletion-activity.js'
import type { UploadDeadline } from './upload-deadline.js'
import { saveChunkedRows } from './chunked-rows.js'
import { saveReferencedPayload } from './referenced-payload.js'
import type { UploadResult } from './upload-result.js'
import { feedsDisabledSite, getStream } from './streams.js'
import { StageCollector } from './upload-stage.js'
import { UploadSpool, type SpoolBudget } from './upload-spool.js'
import { finishBatch, insertBatch } from './batch-store.js'
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

/**
 * Hears of each upload once its answer is final: a stored batch after its commit (`accepted`), or an
 * empty payload refused (`empty`, nothing stored). The metrics count them; an upload that rolled back
 * is not heard of.
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
    // With an idempotency key, the body is hashed as it arrives: the key is claimed for this body.
    const digest = requestHasClaim() ? createHash('sha256') : null
    const body = decodedBody(request.body, request.contentEncoding, limits)
    const spool = await UploadSpool.receive(digest ? digestingChunks(body, digest) : body, request.spool, accountId)
    try {
      if (digest) await beginRequestClaim(digest.digest('hex'))
      const result = await inUploadSlot(request.slots, accountId, deadline, async () => {
        // Checked again: the stream may have been locked, disabled or deleted while the body arrived.
        const stream = await uploadableStream(db, accountId, request.streamId)
        checkMediaType(stream, request.kind, mediaType)
        const { kind, maxAttributes, now } = request
        return stream.type === 'referenced' && kind === 'upsert'
          ? await saveReferencedPayload(db, { stream, mediaType, chunks: spool.chunks(), deadline, now })
          : await saveChunkedRows(db, { stream, kind, mediaType, chunks: spool.chunks(), deadline, maxAttributes, now })
      })
      // Committed by now (or refused as empty): a batch that rolled back is never counted.
      request.observer?.uploaded(result, spool.bytes)
      return result
    } finally {
      await spool.release()
    }
  })
}

export interface DeleteRequest {
  accountId: string
  streamId: string
  /** The product to delete; undefined deletes every product of the stream. */
  productId: string | undefined
  now: Date
  deadline: UploadDeadline
  slots: ConnectionSlots
  observer?: UploadObserver
}

/** Deletes of one product or of every product: a batch without a body. */
export async function deleteProducts(db: Db, request: DeleteRequest): Promise<Batch> {
  const { accountId, productId, deadline } = request
  // Postgres text cannot hold these; uploaded rows get the control-character error for them.
  if (productId !== undefined && hasUnstorableCharacter(productId)) {
    throw new BadRequestError('productId: a product id cannot contain a NUL character (%00) or an unpaired surrogate')
  }
  return deadline.run(() =>
    inUploadSlot(request.slots, accountId, deadline, async () => {
      const stream = await uploadableStream(db, accountId, request.streamId)
      const kind: BatchKind = productId === undefined ? 'delete_all' : 'delete'
      const collector = new StageCollector()
      collector.success()
      const batchId = randomUUID()
      const stored = await inTransaction(db, async (tx) => {
        await deadline.limit(tx.db)
        await insertBatch(tx.db, { batchId, stream, kind, contentType: null, now: request.now })
        if (productId !== undefined) {
          await tx.db.insertInto('batch_row').values({ batch_id: batchId, line_no: 1, account_id: accountId, product_id: productId, data: null }).execute()
        }
        const batch = await finishBatch(tx.db, batchId, collector.stage(request.now), 'uploaded')
        await recordEvent(tx, accountId, 'batch.uploaded', batchUploadedData(batch))
        await recordDeletion(tx.db, { stream, batchId, kind, productId, rows: productId === undefined ? null : 1 })
        await settleRequestClaim(tx, batch)
        deadline.commitPoint()
        return batch
      })
      request.observer?.uploaded({ outcome: 'accepted', batch: stored }, 0)
      return stored
    }),
  )
}

/**
 * Runs `work` holding one of the account's upload slots. An account with its share of uploads
 * written and waiting already is refused with a busy answer: nothing was written, so it may retry.
 */
async function inUploadSlot<T>(slots: ConnectionSlots, accountId: string, deadline: UploadDeadline, work: () => Promise<T>): Promise<T> {
  return slots.run(accountId, deadline.signal, work).catch((error: unknown) => {
    if (!(error instanceof SlotsFullError)) throw error
    throw new ServiceBusyError(
      1,
      `This account already has ${error.inFlight} uploads being written or waiting, ` +
        'the most it may have (UPLOADS_PER_ACCOUNT + UPLOAD_QUEUE_PER_ACCOUNT); retry in a moment',
    )
  })
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
