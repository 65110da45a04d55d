import { randomUUID } from 'node:crypto'
import type { Db } from '../db/database.js'
import type { LockedTransaction } from '../db/advisory-locks.js'
import type { Run, RunAction, Site } from '../db/schema.js'
import { BadRequestError, NotFoundError } from '../errors.js'
import { isId } from '../db/ids.js'
import { inTransaction } from '../db/transaction.js'
import type { Changes } from '../activity/activity-changes.js'
import { recordActivity } from '../activity/activity-store.js'
import { settleRequestClaim } from '../activity/request-scope.js'
import { getSite } from '../sites/sites.js'
import { activeRuns, admittedRuns, lockAccountRuns, lockSiteRuns } from '../runs/run-admission-store.js'
import { admitRun, estimatedSeconds, findRun, insertRun } from '../runs/run-store.js'
import type { RunQueue } from './run-queue.js'

export const ACTIONS: readonly RunAction[] = ['import', 'export', 'channel', 'export-all', 'all']
const EXPORTS: readonly RunAction[] = ['export', 'channel', 'export-all']

export interface RunRequest {
  action?: string | null
  id?: string | number | null
}

export interface QueuedRun {
  pid: string
  estimatedDuration: number
  message: string
}

/** POST /process/{siteId}: validates the request and queues the run (docs/interface.md "Process", docs/design.md 5.5). */
export async function requestRun(db: Db, queue: RunQueue, accountId: string, siteSegment: string, body: RunRequest): Promise<QueuedRun> {
  const action = body.action
  if (action === undefined || action === null || action === '') throw new BadRequestError(`action is required: one of ${ACTIONS.join(', ')}`)
  if (!ACTIONS.includes(action as RunAction)) throw new BadRequestError(`action "${action}" is not one of ${ACTIONS.join(', ')}`)
  const targetId = body.id === undefined || body.id === null || body.id === '' ? null : String(body.id)
  if (targetId !== null && !isId(targetId)) throw new BadRequestError(`id must be a positive integer, got ${JSON.stringify(body.id)}`)
  if ((action === 'export' || action === 'channel') && targetId === null) {
    throw new BadRequestError(`id is required for action ${action}: the ${action === 'export' ? 'export' : 'channel'} id to run`)
  }
  const site = await getSite(db, accountId, siteSegment)
  // From the runs before this one: estimated before it is queued.
  const estimatedDuration = await estimatedSeconds(db, site.id, action as RunAction)
  const queued = await inTransaction(db, async (tx) => {
    const run = await queueRun(tx.db, queue, { site, action: action as RunAction, targetId, trigger: 'api' })
    // The id only where the action names one: an entry lists what was set, never null → null.
    const changes = { action: [null, action], ...(targetId !== null && { id: [null, targetId] }) } satisfies Changes
    await recordActivity(tx.db, { accountId, action: 'run.requested', target: { type: 'run', id: run.pid, siteId: site.id }, changes })
    const answer = { ...run, estimatedDuration }
    await settleRequestClaim(tx, answer)
    return answer
  })
  queue.wake()
  return queued
}

/** A run to queue: of which site, doing what (`targetId`: the channel or template of an export), asked by whom. */
export interface RunToQueue {
  site: Site
  action: RunAction
  targetId: string | null
  trigger: 'api' | 'schedule'
}

/**
 * Queues a run of the site, if the site allows one now, in the caller's transaction `trx` (the locks
 * below hold until its commit, and the run and its admission commit or roll back with the caller's other
 * work): under the lock of the site's active runs, at most one runs and one waits. The run is
 * admitted in the same transaction when nothing runs; otherwise it waits unadmitted until the
 * running one ends. Throws an AppError, having written nothing, when the site takes no run now.
 */
export async function queueRun(trx: LockedTransaction, queue: RunQueue, request: RunToQueue): Promise<{ pid: string; message: string }> {
  const { site, action, targetId, trigger } = request
  if (site.status === 'disabled') throw new BadRequestError(`Site ${site.id} is disabled: it runs no imports or exports until its status is changed`)
  if (site.status === 'paused_upload' && EXPORTS.includes(action)) {
    throw new BadRequestError(`Site ${site.id} is paused_upload: it imports but does not export; run action import, or change the site's status`)
  }
  const pid = randomUUID()
  // The site row lock serialises requests of one site, so the count below cannot go stale. A site
  // deleted since it was read is not found, as it would be a moment later.
  if (!(await lockSiteRuns(trx, site.id))) throw new NotFoundError()
  const active = await activeRuns(trx, site.id)
  const waiting = active.find((run) => run.status === 'queued')
  if (waiting) {
    throw new BadRequestError(
      `A run of site ${site.id} is already queued (process ${waiting.pid}); one run may run and one wait, try again once it has started`,
    )
  }
  await insertRun(trx, { pid, accountId: site.account_id, siteId: site.id, action, targetId, trigger })
  const running = active.find((run) => run.status === 'running')
  if (running) return { pid, message: `Run queued; it starts when process ${running.pid} has finished` }
  // Run slots are shared fairly: an account's runs beyond its share wait here, unadmitted, so that
  // the next run claimed is always another account's while this one has its share running.
  await lockAccountRuns(trx, site.account_id)
  if ((await admittedRuns(trx, site.account_id)) >= queue.accountConcurrency) {
    const message = `Run queued; it starts when one of the account's other runs has finished (an account runs at most ${queue.accountConcurrency} at a time)`
    return { pid, message }
  }
  await admitRun(trx, pid)
  return { pid, message: 'Run queued' }
}

export async function getRun(db: Db, accountId: string, siteSegment: string, pid: string): Promise<{ site: Site; run: Run }> {
  const site = await getSite(db, accountId, siteSegment)
  const run = await findRun(db, accountId, site.id, pid)
  if (!run) throw new NotFoundError(`Process ${pid} of site ${site.id} not found`)
  return { site, run }
}
