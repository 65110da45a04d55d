import type { Run } from '../db/schema.js'
import type { AppliedBatches } from '../imports/apply-batches.js'
import type { ImportedStream, ImportObserver } from '../imports/import-site.js'

/**
 * How an attempt of a run ended in this process. `success` and `failed` are the run's status
 * (failed: a failure the site's owner can act on, with its site error); `error` an unexpected
 * failure, which is tried once more; `interrupted` by this process's shutdown, retried elsewhere;
 * `site_deleted` stopped because its site went; `superseded` finished after another attempt had
 * taken the run over; `abandoned` given up after its retry (its status becomes failed).
 */
export type RunOutcome = 'success' | 'failed' | 'error' | 'interrupted' | 'site_deleted' | 'superseded' | 'abandoned'

/** The run an event is about: its row as the attempt claimed it (`attempt` counts from 1). */
export type ObservedRun = Pick<Run, 'pid' | 'account_id' | 'site_id' | 'action' | 'attempt' | 'trigger'>

/** One channel an export wrote, with its delta against the channel's previous export. */
export interface ChannelCounts {
  channel: string
  new: number
  modified: number
  deleted: number
  unchanged: number
}

/** How an attempt ended, with what it did as far as it got. */
export interface RunEnd {
  run: ObservedRun
  outcome: RunOutcome
  /** How long the attempt ran here; none for a run given up, which no attempt here ran. */
  seconds?: number
  /** The run's closing message (its status message), or the failure's. */
  message?: string
  /** The unexpected failure (outcome `error`). */
  error?: unknown
  /** Products in the site's import stage after the run's import. */
  products?: number
  /** The channels the run exported. */
  channels?: ChannelCounts[]
  /** Codes of the site errors the run wrote, in order, each once; none when they could not be read. */
  errorCodes?: number[]
}

/**
 * Hears how runs start and end and what their imports applied: the metrics count them, the run log
 * writes a line for each. A worker without one records nothing. Observers never throw.
 */
export interface RunObserver extends ImportObserver {
  runStarted?(run: ObservedRun): void
  runEnded(end: RunEnd): void
}

/** One observer that passes every event to each of `observers` in turn (metrics and log, say). */
export function allRunObservers(...observers: (RunObserver | undefined)[]): RunObserver {
  const present = observers.filter((observer): observer is RunObserver => observer !== undefined)
  return {
    runStarted: (run) => present.forEach((observer) => observer.runStarted?.(run)),
    runEnded: (end) => present.forEach((observer) => observer.runEnded(end)),
    batchesApplied: (batches: AppliedBatches, where: ImportedStream) => present.forEach((observer) => observer.batchesApplied(batches, where)),
  }
}
