import type { ProcessAction } from '../db/schema.js'
import type { ImportObserver } from '../imports/import-site.js'

/**
 * How an attempt of a run ended in this process. `success` and `failed` are the run's status
 * (failed: a failure the site's owner can act on, with its site error); `error` an unexpected
 * failure, which pg-boss retries once; `interrupted` by this process's shutdown, retried elsewhere;
 * `site_deleted` stopped because its site went; `superseded` finished after another attempt had
 * taken the run over; `abandoned` given up after its retry (its status becomes failed).
 */
export type RunOutcome = 'success' | 'failed' | 'error' | 'interrupted' | 'site_deleted' | 'superseded' | 'abandoned'

/** Hears how runs end and what their imports applied (the metrics); a worker without one counts nothing. */
export interface RunObserver extends ImportObserver {
  /** `seconds`: how long the attempt ran here; none for a run given up, which no attempt here ran. */
  runEnded(action: ProcessAction, outcome: RunOutcome, seconds?: number): void
}
