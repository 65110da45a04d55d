import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import type { Site } from '../db/schema.js'
import { AppError } from '../errors.js'
import { queueRun } from './run-requests.js'
import type { RunQueue } from './run-queue.js'
import { nextRunAt } from './schedule.js'

export interface SchedulerTick {
  /** Runs queued by this tick. */
  fired: { siteId: string; pid: string }[]
  /** Sites whose schedule was due but whose run could not queue (one already waiting). */
  skipped: { siteId: string; reason: string }[]
}

const BATCH = 100

/**
 * One look at the schedules, by whichever server process gets there first: due rows are claimed
 * FOR UPDATE SKIP LOCKED, so a schedule fires once across all processes. A site whose
 * import_schedule text changed since its next run was computed is recomputed instead of fired,
 * so an edited or emptied schedule takes effect at once.
 */
export async function runSchedulerTick(db: Db, queue: RunQueue, defaultTimeZone: string, now: Date): Promise<SchedulerTick> {
  await syncSchedules(db, defaultTimeZone, now)
  const tick: SchedulerTick = { fired: [], skipped: [] }
  await db.transaction().execute(async (trx) => {
    const due = await trx
      .selectFrom('site_schedule as ss')
      .innerJoin('site as s', 's.id', 'ss.site_id')
      .selectAll('s')
      .where('ss.next_run_at', '<=', now)
      .whereRef('ss.schedule', '=', 's.import_schedule')
      .forUpdate('ss')
      .skipLocked()
      .limit(BATCH)
      .execute()
    for (const site of due) {
      const next = safeNextRun(site.import_schedule, site.id, defaultTimeZone, now)
      await trx.updateTable('site_schedule').set({ next_run_at: next }).where('site_id', '=', site.id).execute()
      await fire(db, queue, site, tick)
    }
  })
  if (tick.fired.length > 0) queue.wake()
  return tick
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

/** Creates, recomputes and removes schedule rows to match the sites' import_schedule texts. */
async function syncSchedules(db: Db, defaultTimeZone: string, now: Date): Promise<void> {
  await sql`
    DELETE FROM site_schedule ss USING site s
    WHERE s.id = ss.site_id AND s.import_schedule = ''`.execute(db)
  const changed = await db
    .selectFrom('site as s')
    .leftJoin('site_schedule as ss', 'ss.site_id', 's.id')
    .select(['s.id', 's.account_id', 's.import_schedule'])
    .where('s.import_schedule', '<>', '')
    .where((eb) => eb.or([eb('ss.site_id', 'is', null), eb('ss.schedule', '<>', eb.ref('s.import_schedule'))]))
    .limit(1000)
    .execute()
  for (const site of changed) {
    const next = safeNextRun(site.import_schedule, site.id, defaultTimeZone, now)
    await db
      .insertInto('site_schedule')
      .values({ site_id: site.id, account_id: site.account_id, schedule: site.import_schedule, next_run_at: next })
      .onConflict((oc) => oc.column('site_id').doUpdateSet({ schedule: site.import_schedule, next_run_at: next }))
      .execute()
  }
}

// Schedules are validated when saved; one that no longer parses (a time zone dropped from the
// runtime's data, say) must not stop the other sites' schedules, so it simply never fires.
function safeNextRun(text: string, siteId: string, defaultTimeZone: string, now: Date): Date | null {
  try {
    return nextRunAt(text, siteId, defaultTimeZone, now)
  } catch {
    return null
  }
}
