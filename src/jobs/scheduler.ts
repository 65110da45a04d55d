import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import type { Site } from '../db/schema.js'
import { AppError } from '../errors.js'
import { queueRun } from './run-requests.js'
import type { RunQueue } from './run-queue.js'
import { ScheduleError, checkScheduleSize, earliest, nextRunOfLine, parseSchedule, type ScheduleLimits } from './schedule.js'

export interface SchedulerLog {
  warn(details: Record<string, unknown>, message: string): void
}

export interface SchedulerSettings {
  defaultTimeZone: string
  /** MAX_SCHEDULE_LINES and MAX_SCHEDULE_CHARS: a stored schedule over them is never evaluated. */
  limits: ScheduleLimits
  log: SchedulerLog
}

export interface SchedulerTick {
  /** Runs queued by this tick. */
  fired: { siteId: string; pid: string }[]
  /** Sites whose schedule was due but whose run could not queue (one already waiting). */
  skipped: { siteId: string; reason: string }[]
  /** Sites whose stored schedule is over the limits (saved before they existed): never evaluated. */
  ignored: { siteId: string; reason: string }[]
}

// A tick works through its rows in batches and yields to the event loop between them, and handles
// at most MAX_ROUNDS batches per phase: whatever is left waits for the next tick, so one pass is
// bounded however many sites are due.
const BATCH = 100
const MAX_ROUNDS = 50

/**
 * One look at the schedules, by whichever server process gets there first: due rows are claimed
 * FOR UPDATE SKIP LOCKED, so a schedule fires once across all processes. A site whose
 * import_schedule text changed since its next run was computed is recomputed instead of fired,
 * so an edited or emptied schedule takes effect at once.
 */
export async function runSchedulerTick(db: Db, queue: RunQueue, settings: SchedulerSettings, now: Date): Promise<SchedulerTick> {
  const tick: SchedulerTick = { fired: [], skipped: [], ignored: [] }
  await sql`
    DELETE FROM site_schedule ss USING site s
    WHERE s.id = ss.site_id AND s.import_schedule = ''`.execute(db)
  for (let round = 0; round < MAX_ROUNDS && (await syncBatch(db, settings, now, tick)) === BATCH; round++) await yieldToEventLoop()
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const claimed = await fireBatch(db, queue, settings, now, tick)
    if (tick.fired.length > 0) queue.wake()
    if (claimed < BATCH) break
    await yieldToEventLoop()
  }
  return tick
}

// The schedule text is read only when it is within the character limit, so that a huge stored one
// is neither sent over the wire nor split.
const boundedSchedule = (limits: ScheduleLimits) =>
  sql<string | null>`CASE WHEN char_length(s.import_schedule) <= ${limits.maxChars} THEN s.import_schedule END`.as('import_schedule')

/** Claims up to BATCH due rows, moves each to its next time and fires it; answers how many it claimed. */
async function fireBatch(db: Db, queue: RunQueue, settings: SchedulerSettings, now: Date, tick: SchedulerTick): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const due = await trx
      .selectFrom('site_schedule as ss')
      .innerJoin('site as s', 's.id', 'ss.site_id')
      .select(['s.id', 's.account_id', 's.project_id', 's.title', 's.status', 's.id_column', 's.processing_status', 's.created_at', 's.updated_at'])
      .select(boundedSchedule(settings.limits))
      .where('ss.next_run_at', '<=', now)
      .whereRef('ss.schedule', '=', 's.import_schedule')
      .forUpdate('ss')
      .skipLocked()
      .limit(BATCH)
      .execute()
    for (const row of due) {
      const evaluated = await evaluate(row.import_schedule, row.id, settings, now)
      await trx.updateTable('site_schedule').set({ next_run_at: evaluated.next }).where('site_id', '=', row.id).execute()
      if (evaluated.ignored !== undefined) ignore(settings, tick, row, evaluated.ignored)
      else await fire(db, queue, { ...row, import_schedule: row.import_schedule ?? '' }, tick)
    }
    return due.length
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

/** Creates or recomputes up to BATCH schedule rows whose site's import_schedule text changed; answers how many. */
async function syncBatch(db: Db, settings: SchedulerSettings, now: Date, tick: SchedulerTick): Promise<number> {
  const changed = await db
    .selectFrom('site as s')
    .leftJoin('site_schedule as ss', 'ss.site_id', 's.id')
    .select(['s.id', 's.account_id'])
    .select(boundedSchedule(settings.limits))
    .where('s.import_schedule', '<>', '')
    .where((eb) => eb.or([eb('ss.site_id', 'is', null), eb('ss.schedule', '<>', eb.ref('s.import_schedule'))]))
    .limit(BATCH)
    .execute()
  for (const site of changed) {
    const evaluated = await evaluate(site.import_schedule, site.id, settings, now)
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
  }
  return changed.length
}

function ignore(settings: SchedulerSettings, tick: SchedulerTick, site: { id: string; account_id: string }, reason: string): void {
  tick.ignored.push({ siteId: site.id, reason })
  settings.log.warn({ siteId: site.id, accountId: site.account_id, reason }, 'import_schedule over the limits is not evaluated; the site runs on no schedule until it is saved again')
}

/**
 * The next run of a stored schedule, or why it is not evaluated (null text: over the character
 * limit). Schedules are validated when saved; one that no longer parses (a time zone dropped from
 * the runtime's data, say) must not stop the other sites' schedules, so it simply never fires.
 */
async function evaluate(text: string | null, siteId: string, settings: SchedulerSettings, now: Date): Promise<{ next: Date | null; ignored?: string }> {
  try {
    if (text === null) throw new ScheduleError(`over ${settings.limits.maxChars} characters (MAX_SCHEDULE_CHARS)`)
    checkScheduleSize(text, settings.limits)
  } catch (error) {
    if (error instanceof ScheduleError) return { next: null, ignored: error.message }
    throw error
  }
  try {
    const schedule = parseSchedule(text)
    const candidates: (Date | null)[] = []
    for (const line of schedule.lines) {
      // One line can cost milliseconds: other requests get their turn between lines.
      await yieldToEventLoop()
      candidates.push(nextRunOfLine(line, siteId, schedule.timeZone ?? settings.defaultTimeZone, now))
    }
    return { next: earliest(candidates) }
  } catch {
    return { next: null }
  }
}
