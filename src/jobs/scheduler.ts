import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import type { Db } from '../db/database.js'
import type { LockedTransaction } from '../db/advisory-locks.js'
import type { Site } from '../db/schema.js'
import { inTransaction } from '../db/transaction.js'
import { AppError } from '../errors.js'
import { lockRunsOfSites } from '../runs/run-admission-store.js'
import { queueRun } from './run-requests.js'
import type { RunQueue } from './run-queue.js'
import {
  changedSchedules,
  claimDueSchedules,
  deleteEmptySchedules,
  dueSchedules,
  saveOversizedSchedule,
  saveSchedule,
  type ScheduleRow,
} from './schedule-store.js'
import {
  ScheduleError,
  checkScheduleSize,
  earliest,
  hashedMinute,
  nextRunOfLine,
  parseSchedule,
  type ParsedSchedule,
  type ScheduleLimits,
} from '../sites/site-schedule.js'

export interface SchedulerLog {
  warn(details: Record<string, unknown>, message: string): void
}

export interface SchedulerSettings {
  defaultTimeZone: string
  /** MAX_SCHEDULE_LINES and MAX_SCHEDULE_CHARS: a stored schedule over them is never evaluated. */
  limits: ScheduleLimits
  log: SchedulerLog
  /** Time one phase of a pass may spend evaluating schedules before it leaves the rest to the next tick. */
  budgetMs?: number
}

export interface SchedulerTick {
  /** Runs queued by this tick. */
  fired: { siteId: string; pid: string }[]
  /** Sites whose schedule was due but whose run could not queue (one already waiting). */
  skipped: { siteId: string; reason: string }[]
  /** Sites whose stored schedule is over the limits or no longer valid (saved before a rule existed): never evaluated. */
  ignored: { siteId: string; reason: string }[]
}

// A tick works through its rows in batches and yields to the event loop between them, and handles
// at most MAX_ROUNDS batches per phase: whatever is left waits for the next tick, so one pass is
// bounded however many sites are due.
const BATCH = 100
const MAX_ROUNDS = 50
// Evaluating schedules is CPU work on the thread that serves requests: once a phase of a pass has
// spent this long on it (having handled at least one site), the next tick goes on from there.
export const SCHEDULER_PASS_BUDGET_MS = 1000
// Next runs computed in this tick, shared by sites with the same line and zone (same `now`).
const MEMO_ENTRIES = 10_000

/** Where a pass stands: the last account served (kept across ticks), its evaluation time, its memo. */
interface Pass {
  rotation: Rotation
  budgetMs: number
  spentMs: number
  memo: Map<string, Date | null>
}
interface Rotation {
  lastAccountId?: string
}
// Per settings object, which the server keeps for its whole life: round-robin resumes where the
// previous tick stopped, so a cut-short pass does not serve the same accounts first every time.
const rotations = new WeakMap<SchedulerSettings, Rotation>()

/**
 * One look at the schedules, by whichever server process gets there first: due rows are claimed
 * in one statement (FOR UPDATE SKIP LOCKED), so a schedule fires once across all processes. A site whose
 * import_schedule text changed since its next run was computed is recomputed instead of fired,
 * so an edited or emptied schedule takes effect at once.
 *
 * Accounts take turns: each batch holds every account's first due (or changed) site before any
 * account's second one, starting after the account served last, so one account's thousand sites
 * cannot hold another's schedule back by more than a tick.
 */
export async function runSchedulerTick(db: Db, queue: RunQueue, settings: SchedulerSettings, now: Date): Promise<SchedulerTick> {
  const tick: SchedulerTick = { fired: [], skipped: [], ignored: [] }
  let rotation = rotations.get(settings)
  if (!rotation) rotations.set(settings, (rotation = {}))
  const budgetMs = settings.budgetMs ?? SCHEDULER_PASS_BUDGET_MS
  const pass = (): Pass => ({ rotation, budgetMs, spentMs: 0, memo: new Map() })
  await deleteEmptySchedules(db)
  // Due schedules first: they are late already, a changed one is computed for later.
  const firing = pass()
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const { claimed, done } = await fireBatch(db, queue, settings, now, tick, firing)
    if (tick.fired.length > 0) queue.wake()
    if (claimed < BATCH || !done) break
    await yieldToEventLoop()
  }
  const syncing = { ...pass(), memo: firing.memo }
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const { claimed, done } = await syncBatch(db, settings, now, tick, syncing)
    if (claimed < BATCH || !done) break
    await yieldToEventLoop()
  }
  return tick
}

interface BatchResult {
  claimed: number
  /** False when the budget ran out before every claimed row was handled. */
  done: boolean
}

/**
 * Evaluates up to BATCH due schedules while the budget lasts, then in one transaction claims them
 * (moving each to its next run) and queues their runs. One transaction, so that the tick is atomic:
 * a run that could not be queued for a reason other than the site's own state (an AppError) rolls
 * back the whole batch, the runs queued before it included, and the batch is due again next tick.
 * The schedules are evaluated before the transaction: it holds row locks, evaluation takes CPU time.
 */
async function fireBatch(db: Db, queue: RunQueue, settings: SchedulerSettings, now: Date, tick: SchedulerTick, pass: Pass): Promise<BatchResult> {
  const due = await dueSchedules(db, now, settings.limits, pass.rotation.lastAccountId, BATCH)
  const evaluated = new Map<string, { row: ScheduleRow; next: Date | null; ignored?: string }>()
  for (const row of due) {
    evaluated.set(row.id, { row, ...(await evaluate(row.import_schedule, row.id, settings, now, pass)) })
    pass.rotation.lastAccountId = row.account_id
    // The rows not reached stay due and unchanged.
    if (pass.spentMs > pass.budgetMs) break
  }
  if (evaluated.size === 0) return { claimed: 0, done: true }
  const claims = [...evaluated].map(([siteId, { next }]) => ({ siteId, next }))
  const batch = await inTransaction(db, async (tx) => {
    const outcome: BatchOutcome = { fired: [], skipped: [], ignored: [], claimed: 0 }
    const claimed = new Map((await claimDueSchedules(tx.db, now, claims)).map((site) => [site.id, site]))
    outcome.claimed = claimed.size
    const firing: Site[] = []
    for (const [siteId, { row, ignored }] of evaluated) {
      const site = claimed.get(siteId)
      if (!site) continue
      if (ignored !== undefined) outcome.ignored.push({ row, reason: ignored })
      // A schedule runs `all`; a paused_upload site only imports, a disabled one runs nothing.
      else if (site.status !== 'disabled') firing.push({ ...site, import_schedule: row.import_schedule ?? '' })
    }
    await lockRunsOfSites(tx.db, firing)
    for (const site of firing) await fire(tx.db, queue, site, outcome)
    return outcome
  })
  // Reported once committed: a batch that rolled back fired nothing.
  for (const { row, reason } of batch.ignored) ignore(settings, tick, row, reason)
  tick.fired.push(...batch.fired)
  tick.skipped.push(...batch.skipped)
  // Due rows that are all held by another process's tick are left to it, not read again.
  const held = batch.claimed === 0 && evaluated.size > 0
  return { claimed: due.length, done: evaluated.size === due.length && !held }
}

interface BatchOutcome extends Pick<SchedulerTick, 'fired' | 'skipped'> {
  ignored: { row: ScheduleRow; reason: string }[]
  claimed: number
}

async function fire(trx: LockedTransaction, queue: RunQueue, site: Site, tick: Pick<SchedulerTick, 'fired' | 'skipped'>): Promise<void> {
  try {
    const action = site.status === 'paused_upload' ? 'import' : 'all'
    const queued = await queueRun(trx, queue, { site, action, targetId: null, trigger: 'schedule' })
    tick.fired.push({ siteId: site.id, pid: queued.pid })
  } catch (error) {
    if (!(error instanceof AppError)) throw error
    tick.skipped.push({ siteId: site.id, reason: error.message })
  }
}

/** Creates or recomputes up to BATCH schedule rows whose site's import_schedule text changed, while the budget lasts. */
async function syncBatch(db: Db, settings: SchedulerSettings, now: Date, tick: SchedulerTick, pass: Pass): Promise<BatchResult> {
  const changed = await changedSchedules(db, settings.limits, pass.rotation.lastAccountId, BATCH)
  for (const site of changed) {
    const evaluated = await evaluate(site.import_schedule, site.id, settings, now, pass)
    if (site.import_schedule === null) await saveOversizedSchedule(db, site, settings.limits.maxChars)
    else await saveSchedule(db, site, site.import_schedule, evaluated.next)
    if (evaluated.ignored !== undefined) ignore(settings, tick, site, evaluated.ignored)
    pass.rotation.lastAccountId = site.account_id
    if (pass.spentMs > pass.budgetMs) return { claimed: changed.length, done: false }
  }
  return { claimed: changed.length, done: true }
}

function ignore(settings: SchedulerSettings, tick: SchedulerTick, site: { id: string; account_id: string }, reason: string): void {
  tick.ignored.push({ siteId: site.id, reason })
  settings.log.warn(
    { siteId: site.id, accountId: site.account_id, reason },
    'import_schedule over the limits or no longer valid is not evaluated; the site runs on no schedule until it is saved again',
  )
}

/**
 * The next run of a stored schedule, or why it is not evaluated: over the character limit (null
 * text), over the line limit, or no longer valid (saved before a rule such as "fires at least once
 * a year" existed, or a time zone dropped from the runtime's data). Such a schedule must not stop
 * the other sites' schedules, nor cost what it would to search: it simply never fires.
 */
async function evaluate(
  text: string | null,
  siteId: string,
  settings: SchedulerSettings,
  now: Date,
  pass: Pass,
): Promise<{ next: Date | null; ignored?: string }> {
  let schedule: ParsedSchedule
  const started = performance.now()
  try {
    if (text === null) throw new ScheduleError(`over ${settings.limits.maxChars} characters (MAX_SCHEDULE_CHARS)`)
    checkScheduleSize(text, settings.limits)
    schedule = parseSchedule(text)
  } catch (error) {
    return { next: null, ignored: error instanceof ScheduleError ? error.message : 'could not be read' }
  } finally {
    pass.spentMs += performance.now() - started
  }
  const timezone = schedule.timeZone ?? settings.defaultTimeZone
  // Only a line whose minute is H depends on the site.
  const minute = String(hashedMinute(siteId))
  const candidates: (Date | null)[] = []
  for (const line of schedule.lines) {
    const key = `${timezone}\n${/^H\s/i.test(line) ? minute : ''}\n${line}`
    let next = pass.memo.get(key)
    if (next === undefined) {
      // One line can cost a millisecond: other requests get their turn between lines.
      await yieldToEventLoop()
      const searched = performance.now()
      try {
        next = nextRunOfLine(line, siteId, timezone, now)
      } catch {
        next = null
      }
      pass.spentMs += performance.now() - searched
      if (pass.memo.size < MEMO_ENTRIES) pass.memo.set(key, next)
    }
    candidates.push(next)
  }
  return { next: earliest(candidates) }
}
