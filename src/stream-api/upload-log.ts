import type { FastifyBaseLogger } from 'fastify'
import type { UploadObserver } from '../streams/uploads.js'

/**
 * A line for every upload whose answer is final, on the request's logger (so it carries the
 * request's `reqId`): a stored batch, bad lines and all, or an empty payload refused (422, nothing
 * stored). Info either way: what a client sent wrong is in the batch for the client to read, and
 * nothing for the operator to act on.
 */
export function uploadLog(log: FastifyBaseLogger): UploadObserver {
  return {
    uploaded({ statusCode, batch }, bytes) {
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
        statusCode,
      }
      log.info(fields, statusCode === 202 ? 'batch uploaded' : 'upload refused: empty payload')
    },
  }
}

/** One observer that tells each of `observers` in turn (the metrics and the upload log). */
export function allUploadObservers(...observers: (UploadObserver | undefined)[]): UploadObserver {
  const present = observers.filter((observer): observer is UploadObserver => observer !== undefined)
  return { uploaded: (result, bytes) => present.forEach((observer) => observer.uploaded(result, bytes)) }
}
