import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import type { Site } from '../db/schema.js'
import { AppError } from '../errors.js'
import { queueRun } from './run-requests.js'
import type { RunQueue } from './run-queue.js'
import { ScheduleError, checkScheduleSize, earliest, hashedMinute, nextRunOfLine, parseSchedule, type ParsedSchedule, type ScheduleLimits } from '../sites/site-schedule.js'

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
 * FOR UPDATE SKIP LOCKED, so a schedule fires once across all processes. A site whose
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
  await sql`
    DELETE FROM site_schedule ss USING site s
    WHERE s.id = ss.site_id AND s.import_schedule = ''`.execute(db)
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

// The schedule text is read only when it is within the character limit, so that a huge stored one
// is neither sent over the wire nor split.
const boundedSchedule = (limits: ScheduleLimits) =>
  sql<string | null>`CASE WHEN char_length(s.import_schedule) <= ${limits.maxChars} THEN s.import_schedule END`.as('import_schedule')

// Accounts after the last one served come first, then the rest from the lowest id.
const afterLastServed = (column: 'ss.account_id' | 's.account_id', lastAccountId: string) => sql<boolean>`${sql.ref(column)} <= ${lastAccountId}`

interface BatchResult {
  claimed: number
  /** False when the budget ran out before every claimed row was handled. */
  done: boolean
}

/** Claims up to BATCH due rows, moves each to its next time and fires it, while the budget lasts. */
async function fireBatch(db: Db, queue: RunQueue, settings: SchedulerSettings, now: Date, tick: SchedulerTick, pass: Pass): Promise<BatchResult> {
  const last = pass.rotation.lastAccountId
  return db.transaction().execute(async (trx) => {
    const due = await trx
      // A window function cannot sit beside FOR UPDATE: the turns are numbered in a CTE.
      .with('turns', (qb) =>
        qb
          .selectFrom('site_schedule as ss')
          .innerJoin('site as s', 's.id', 'ss.site_id')
          .select('ss.site_id')
          .select((eb) => eb.fn.agg<string>('row_number').over((ob) => ob.partitionBy('ss.account_id').orderBy('ss.next_run_at').orderBy('ss.site_id')).as('turn'))
          .where('ss.next_run_at', '<=', now)
          .whereRef('ss.schedule', '=', 's.import_schedule'),
      )
      .selectFrom('site_schedule as ss')
      .innerJoin('site as s', 's.id', 'ss.site_id')
      .innerJoin('turns as t', 't.site_id', 'ss.site_id')
      .select(['s.id', 's.account_id', 's.project_id', 's.title', 's.status', 's.id_column', 's.processing_status', 's.created_at', 's.updated_at'])
      .select(boundedSchedule(settings.limits))
      .where('ss.next_run_at', '<=', now)
      .whereRef('ss.schedule', '=', 's.import_schedule')
      .orderBy('t.turn')
      .$if(last !== undefined, (qb) => qb.orderBy(afterLastServed('ss.account_id', last ?? '')))
      .orderBy('ss.account_id')
      .forUpdate('ss')
      .skipLocked()
      .limit(BATCH)
      .execute()
    for (const row of due) {
      const evaluated = await evaluate(row.import_schedule, row.id, settings, now, pass)
      await trx.updateTable('site_schedule').set({ next_run_at: evaluated.next }).where('site_id', '=', row.id).execute()
      if (evaluated.ignored !== undefined) ignore(settings, tick, row, evaluated.ignored)
      else await fire(db, queue, { ...row, import_schedule: row.import_schedule ?? '' }, tick)
      pass.rotation.lastAccountId = row.account_id
      // The rows not reached stay due and unchanged; the lock ends with the transaction.
      if (pass.spentMs > pass.budgetMs) return { claimed: due.length, done: false }
    }
    return { claimed: due.length, done: true }
  })
}

// A schedule runs `all`; a paused_upload site only imports, a disabled one runs nothing.
async function fire(db: Db, queue: RunQueue, site: Site, tick: SchedulerTick): Promise<void> {
  if (site.status === 'disabled') return
  try {
    const queued = await queueRun(db, queue, site, site.status === 'paused_upload' ? 'import' : 'all', null, 'schedule')
    tick.fired.push({ siteId: site.id, pid: queued.pid })
  } catch (error) {
    if (!(error instanceof AppError)) throw error
    tick.skipped.push({ siteId: site.id, reason: error.message })
  }
}

/** Creates or recomputes up to BATCH schedule rows whose site's import_schedule text changed, while the budget lasts. */
async function syncBatch(db: Db, settings: SchedulerSettings, now: Date, tick: SchedulerTick, pass: Pass): Promise<BatchResult> {
  const last = pass.rotation.lastAccountId
  const changed = await db
    .selectFrom('site as s')
    .leftJoin('site_schedule as ss', 'ss.site_id', 's.id')
    .select(['s.id', 's.account_id'])
    .select(boundedSchedule(settings.limits))
    .select((eb) => eb.fn.agg<string>('row_number').over((ob) => ob.partitionBy('s.account_id').orderBy('s.id')).as('turn'))
    .where('s.import_schedule', '<>', '')
    .where((eb) => eb.or([eb('ss.site_id', 'is', null), eb('ss.schedule', '<>', eb.ref('s.import_schedule'))]))
    .orderBy('turn')
    .$if(last !== undefined, (qb) => qb.orderBy(afterLastServed('s.account_id', last ?? '')))
    .orderBy('s.account_id')
    .limit(BATCH)
    .execute()
  for (const site of changed) {
    const evaluated = await evaluate(site.import_schedule, site.id, settings, now, pass)
    if (site.import_schedule === null) {
      // Copied inside the database, and only while the text is still the oversized one read above.
      await sql`
        INSERT INTO site_schedule (site_id, account_id, schedule, next_run_at)
        SELECT id, account_id, import_schedule, NULL FROM site
        WHERE id = ${site.id} AND account_id = ${site.account_id} AND char_length(import_schedule) > ${settings.limits.maxChars}
        ON CONFLICT (site_id) DO UPDATE SET schedule = excluded.schedule, next_run_at = NULL`.execute(db)
    } else {
      await db
        .insertInto('site_schedule')
        .values({ site_id: site.id, account_id: site.account_id, schedule: site.import_schedule, next_run_at: evaluated.next })
        .onConflict((oc) => oc.column('site_id').doUpdateSet({ schedule: site.import_schedule ?? '', next_run_at: evaluated.next }))
        .execute()
    }
    if (evaluated.ignored !== undefined) ignore(settings, tick, site, evaluated.ignored)
    pass.rotation.lastAccountId = site.account_id
    if (pass.spentMs > pass.budgetMs) return { claimed: changed.length, done: false }
  }
  return { claimed: changed.length, done: true }
}

function ignore(settings: SchedulerSettings, tick: SchedulerTick, site: { id: string; account_id: string }, reason: string): void {
  tick.ignored.push({ siteId: site.id, reason })
  settings.log.warn({ siteId: site.id, accountId: site.account_id, reason }, 'import_schedule over the limits or no longer valid is not evaluated; the site runs on no schedule until it is saved again')
}

/**
 * The next run of a stored schedule, or why it is not evaluated: over the character limit (null
 * text), over the line limit, or no longer valid (saved before a rule such as "fires at least once
 * a year" existed, or a time zone dropped from the runtime's data). Such a schedule must not stop
 * the other sites' schedules, nor cost what it would to search: it simply never fires.
 */
async function evaluate(text: string | null, siteId: string, settings: SchedulerSettings, now: Date, pass: Pass): Promise<{ next: Date | null; ignored?: string }> {
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
