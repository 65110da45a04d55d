import type { FastifyBaseLogger } from 'fastify'
import type { UploadOutcome } from '../streams/upload-result.js'
import type { UploadObserver } from '../streams/uploads.js'

/** The answer to each way an upload ends: a stored batch is accepted; an empty payload is refused. */
export const UPLOAD_STATUS = { accepted: 202, empty: 422 } as const satisfies Record<UploadOutcome, number>

/**
 * A line for every upload whose answer is final, on the request's logger (so it carries the
 * request's `reqId`): a stored batch, bad lines and all, or an empty payload refused (422, nothing
 * stored). Info either way: what a client sent wrong is in the batch for the client to read, and
 * nothing for the operator to act on.
 */
export function uploadLog(log: FastifyBaseLogger): UploadObserver {
  return {
    uploaded({ outcome, batch }, bytes) {
      const fields = {
        account: batch.account_id,
        stream: batch.stream_id,
        batch: batch.id,
        kind: batch.kind,
        status: batch.status,
        stage: batch.upload_stage.status,
        successCount: batch.upload_stage.successCount,
        errorCount: batch.upload_stage.errorCount,
        bytes,
        statusCode: UPLOAD_STATUS[outcome],
      }
      log.info(fields, outcome === 'accepted' ? 'batch uploaded' : 'upload refused: empty payload')
    },
  }
}

/** One observer that tells each of `observers` in turn (the metrics and the upload log). */
export function allUploadObservers(...observers: (UploadObserver | undefined)[]): UploadObserver {
  const present = observers.filter((observer): observer is UploadObserver => observer !== undefined)
  return { uploaded: (result, bytes) => present.forEach((observer) => observer.uploaded(result, bytes)) }
}
