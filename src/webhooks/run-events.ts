import type { Run } from '../db/schema.js'
import type { Tx } from '../db/transaction.js'
import { recordEvent, type RecordedEvent } from './outbox.js'
import { runFailedData, runSucceededData } from './payloads.js'

/**
 * Records how a run ended, in the transaction that ends it: `run.succeeded`, or `run.failed` with
 * the codes of the site errors the run has written so far (write them before ending the run).
 *
 *   const ended = await setRunEnded(tx.db, …); if (ended) await recordRunEnded(tx, ended)
 */
export async function recordRunEnded(tx: Pick<Tx, 'db' | 'onCommit'>, run: Run): Promise<RecordedEvent> {
  if (run.status === 'success') return recordEvent(tx, run.account_id, 'run.succeeded', runSucceededData(run))
  const errors = await tx.db
    .selectFrom('site_error')
    .select('error')
    .where('account_id', '=', run.account_id)
    .where('site_id', '=', run.site_id)
    .where('pid', '=', run.pid)
    .orderBy('id')
    .execute()
  return recordEvent(
    tx,
    run.account_id,
    'run.failed',
    runFailedData(
      run,
      errors.map((row) => row.error),
    ),
  )
}
