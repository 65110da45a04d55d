import type { Batch } from '../db/schema.js'

/**
 * How an upload ended, in the domain's words: `accepted`, a batch stored (bad lines and all);
 * `empty`, a payload with nothing in it, which stores nothing. The stream interface answers them
 * 202 and 422.
 */
export type UploadOutcome = 'accepted' | 'empty'

export interface UploadResult {
  outcome: UploadOutcome
  /** The stored batch; for an empty payload, the failed batch that was not stored. */
  batch: Batch
}
