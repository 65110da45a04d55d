import { randomUUID } from 'node:crypto'
import type { Db } from '../db/database.js'
import { inTransaction } from '../db/transaction.js'
import { settleRequestClaim } from '../activity/request-scope.js'
import type { Stream } from '../db/schema.js'
import { claimContentType, emptyPayloadBatch, finishBatch, insertBatch } from './batch-store.js'
import { CopyWriter } from '../db/copy-writer.js'
import type { UploadDeadline } from './upload-deadline.js'
import type { UploadResult } from './upload-result.js'
import { StageCollector } from './upload-stage.js'

export interface ReferencedUpload {
  stream: Stream
  mediaType: string
  chunks: AsyncGenerator<Buffer>
  deadline: UploadDeadline
  now: () => Date
}

const CHUNK_BYTES = 1024 * 1024

// Bytes that an empty payload may consist of: blanks and the punctuation of `[]`, `{}`, `[{},{}]`.
const EMPTY_PAYLOAD_BYTES = new Uint8Array(256)
for (const c of ' \t\r\n[]{},') EMPTY_PAYLOAD_BYTES[c.charCodeAt(0)] = 1

/**
 * A referenced upload is not validated row by row (docs/interface.md section 4, rule 5): the payload is kept
 * as received and parsed by the import. Only a payload with no product at all is refused.
 */
export function saveReferencedPayload(db: Db, upload: ReferencedUpload): Promise<UploadResult> {
  const { stream } = upload
  const batchId = randomUUID()
  return inTransaction(db, async (tx): Promise<UploadResult> => {
    await upload.deadline.limit(tx.db)
    await claimContentType(tx.db, stream, upload.mediaType)
    await insertBatch(tx.db, { batchId, stream, kind: 'upsert', contentType: upload.mediaType, now: upload.now() })
    const copy = new CopyWriter(tx.client, 'COPY batch_payload (batch_id, chunk_no, account_id, chunk) FROM STDIN')
    let pending: Buffer[] = []
    let pendingBytes = 0
    let chunkNo = 0
    let hasContent = false
    const writeChunk = () => {
      copy.row(`${batchId}\t${++chunkNo}\t${stream.account_id}\t\\\\x${Buffer.concat(pending).toString('hex')}\n`)
      pending = []
      pendingBytes = 0
    }
    try {
      for await (const chunk of upload.chunks) {
        if (!hasContent) hasContent = chunk.some((byte) => EMPTY_PAYLOAD_BYTES[byte] === 0)
        pending.push(chunk)
        pendingBytes += chunk.length
        if (pendingBytes >= CHUNK_BYTES) writeChunk()
        await copy.flushIfFull()
      }
      if (pendingBytes > 0) writeChunk()
      await copy.finish()
    } catch (error) {
      copy.abort(error as Error)
      throw error
    }
    if (!hasContent) {
      // Nothing to keep: the batch row and the chunks written above go with the rollback.
      tx.rollbackOnly()
      return { outcome: 'empty', batch: emptyPayloadBatch(stream, upload.now()) }
    }
    const collector = new StageCollector()
    const saved = await finishBatch(tx.db, batchId, collector.stage(upload.now()), 'uploaded')
    const result: UploadResult = { outcome: 'accepted', batch: saved }
    await settleRequestClaim(tx, result)
    upload.deadline.commitPoint()
    return result
  })
}
