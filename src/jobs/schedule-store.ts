import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'
import type { Site } from '../db/schema.js'
import type { ScheduleLimits } from '../sites/site-schedule.js'

// The scheduler's SQL (src/jobs/scheduler.ts): site_schedule holds each scheduled site's next run,
// computed from the site's import_schedule text as it was when the row was written (`schedule`).

/** A schedule to evaluate; `import_schedule` is null when the stored text is over the character limit. */
export interface ScheduleRow {
  id: string
  account_id: string
  import_schedule: string | null
}

/** A site whose schedule this process claimed, with its next run already moved on. */
export type ClaimedSite = Omit<Site, 'import_schedule'>

/** Schedule rows of sites whose schedule was emptied: nothing fires for them any more. */
export async function deleteEmptySchedules(db: DbHandle): Promise<void> {
  await sql`
    DELETE FROM site_schedule ss USING site s
    WHERE s.id = ss.site_id AND s.import_schedule = ''`.execute(db)
}

// The schedule text is read only when it is within the character limit, so that a huge stored one
// is neither sent over the wire nor split.
const boundedSchedule = (limits: ScheduleLimits) =>
  sql<string | null>`CASE WHEN char_length(s.import_schedule) <= ${limits.maxChars} THEN s.import_schedule END`.as('import_schedule')

// Accounts after the last one served come first, then the rest from the lowest id.
const afterLastServed = (column: 'ss.account_id' | 's.account_id', lastAccountId: string) => sql<boolean>`${sql.ref(column)} <= ${lastAccountId}`

/**
 * Up to `limit` due schedules whose text has not changed since their next run was computed, every
 * account's first before any account's second, starting after `lastAccountId`. Not locked: the
 * caller evaluates them first and claims them with claimDueSchedules, which skips what another
 * process claimed meanwhile.
 */
export async function dueSchedules(db: DbHandle, now: Date, limits: ScheduleLimits, lastAccountId: string | undefined, limit: number): Promise<ScheduleRow[]> {
  return db
    .selectFrom('site_schedule as ss')
    .innerJoin('site as s', 's.id', 'ss.site_id')
    .select(['s.id', 's.account_id'])
    .select(boundedSchedule(limits))
    .select((eb) =>
      eb.fn
        .agg<string>('row_number')
        .over((ob) => ob.partitionBy('ss.account_id').orderBy('ss.next_run_at').orderBy('ss.site_id'))
        .as('turn'),
    )
    .where('ss.next_run_at', '<=', now)
    .whereRef('ss.schedule', '=', 's.import_schedule')
    .orderBy('turn')
    .$if(lastAccountId !== undefined, (qb) => qb.orderBy(afterLastServed('ss.account_id', lastAccountId ?? '')))
    .orderBy('ss.account_id')
    .limit(limit)
    .execute()
}

/**
 * Claims the given due schedules and moves each to its next run, in one statement: a row that
 * another process holds is skipped, one that it has moved on or whose text changed meanwhile is no
 * longer due, so a schedule fires once across all processes. Returns the claimed sites, in no order.
 */
export async function claimDueSchedules(db: DbHandle, now: Date, claims: { siteId: string; next: Date | null }[]): Promise<ClaimedSite[]> {
  if (claims.length === 0) return []
  const ids = claims.map((claim) => claim.siteId)
  const { rows } = await sql<ClaimedSite>`
    UPDATE site_schedule ss SET next_run_at = c.next_run_at
    FROM unnest(${ids}::bigint[], ${claims.map((claim) => claim.next)}::timestamptz[]) AS c(site_id, next_run_at), site s
    WHERE ss.site_id = c.site_id AND s.id = ss.site_id
      AND ss.site_id IN (
        SELECT d.site_id FROM site_schedule d JOIN site ds ON ds.id = d.site_id
        WHERE d.site_id = ANY(${ids}::bigint[]) AND d.next_run_at <= ${now} AND d.schedule = ds.import_schedule
        FOR UPDATE OF d SKIP LOCKED)
    RETURNING s.id, s.account_id, s.project_id, s.title, s.status, s.id_column, s.processing_status, s.created_at, s.updated_at`.execute(db)
  return rows
}

/** Up to `limit` sites with a schedule whose row is missing or was computed from another text, accounts in turn. */
export async function changedSchedules(db: DbHandle, limits: ScheduleLimits, lastAccountId: string | undefined, limit: number): Promise<ScheduleRow[]> {
  return db
    .selectFrom('site as s')
    .leftJoin('site_schedule as ss', 'ss.site_id', 's.id')
    .select(['s.id', 's.account_id'])
    .select(boundedSchedule(limits))
    .select((eb) =>
      eb.fn
        .agg<string>('row_number')
        .over((ob) => ob.partitionBy('s.account_id').orderBy('s.id'))
        .as('turn'),
    )
    .where('s.import_schedule', '<>', '')
    .where((eb) => eb.or([eb('ss.site_id', 'is', null), eb('ss.schedule', '<>', eb.ref('s.import_schedule'))]))
    .orderBy('turn')
    .$if(lastAccountId !== undefined, (qb) => qb.orderBy(afterLastServed('s.account_id', lastAccountId ?? '')))
    .orderBy('s.account_id')
    .limit(limit)
    .execute()
}

/** Writes the site's schedule row: the text it was computed from and its next run (null: never). */
export async function saveSchedule(db: DbHandle, site: { id: string; account_id: string }, schedule: string, next: Date | null): Promise<void> {
  await db
    .insertInto('site_schedule')
    .values({ site_id: site.id, account_id: site.account_id, schedule, next_run_at: next })
    .onConflict((oc) => oc.column('site_id').doUpdateSet({ schedule, next_run_at: next }))
    .execute()
}

/**
 * Writes the schedule row of a site whose text is over `maxChars`, never to run. The text is copied
 * inside the database, and only while it is still an oversized one (it was not read, see boundedSchedule).
 */
export async function saveOversizedSchedule(db: DbHandle, site: { id: string; account_id: string }, maxChars: number): Promise<void> {
  await sql`
    INSERT INTO site_schedule (site_id, account_id, schedule, next_run_at)
    SELECT id, account_id, import_schedule, NULL FROM site
    WHERE id = ${site.id} AND account_id = ${site.account_id} AND char_length(import_schedule) > ${maxChars}
    ON CONFLICT (site_id) DO UPDATE SET schedule = excluded.schedule, next_run_at = NULL`.execute(db)
}
