import type { FastifyBaseLogger } from 'fastify'
import type { AppliedBatches } from '../imports/apply-batches.js'
import type { ImportedStream } from '../imports/import-site.js'
import type { ObservedRun, RunEnd, RunObserver, RunOutcome } from './run-observer.js'

// Outcomes the operator need not act on are info; a run that failed, was interrupted or given up
// is a warning; only a failure nobody anticipated (a bug, the database gone) is an error.
const LEVELS: Record<RunOutcome, 'info' | 'warn' | 'error'> = {
  success: 'info',
  site_deleted: 'info',
  superseded: 'info',
  failed: 'warn',
  interrupted: 'warn',
  abandoned: 'warn',
  error: 'error',
}

/** The fields that every line about a run carries: `pid` first, the one to grep for. */
export function runFields(run: ObservedRun): Record<string, unknown> {
  return { pid: run.pid, account: run.account_id, site: run.site_id, action: run.action, attempt: run.attempt }
}

/**
 * The run log: a line when a run starts, one when it ends (whatever the outcome, with its counts,
 * site error codes and message), and one for every batch its import processed. It hears the same
 * events as the metrics (RunObserver), so a run is logged wherever it is counted.
 */
export class RunLog implements RunObserver {
  constructor(private readonly log: FastifyBaseLogger) {}

  runStarted(run: ObservedRun): void {
    this.log.info({ ...runFields(run), trigger: run.trigger }, 'run started')
  }

  runEnded(end: RunEnd): void {
    const fields: Record<string, unknown> = {
      ...runFields(end.run),
      result: end.outcome,
      durationMs: end.seconds === undefined ? undefined : Math.round(end.seconds * 1000),
      products: end.products,
      channels: end.channels && end.channels.length > 0 ? end.channels : undefined,
      errorCodes: end.errorCodes,
      message: end.message,
    }
    if (end.error !== undefined) fields.err = end.error
    this.log[LEVELS[end.outcome]](fields, 'run ended')
  }

  batchesApplied({ each }: AppliedBatches, { pid, accountId, siteId, streamId }: ImportedStream): void {
    for (const batch of each) {
      this.log.info(
        {
          pid,
          account: accountId,
          site: siteId,
          stream: streamId,
          batch: batch.id,
          kind: batch.kind,
          status: batch.status,
          successCount: batch.successCount,
          errorCount: batch.errorCount,
        },
        'batch processed',
      )
    }
  }
}
