import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'
import { sqlState } from '../db/errors.js'
import type { Site, SiteError } from '../db/schema.js'
import { severityOf, type SiteErrorCodeValue } from './run-failure.js'
import { isUuid } from '../db/ids.js'
import { getSite } from './sites.js'
import { latestRunPid } from '../runs/run-reports.js'

export interface NewSiteError {
  accountId: string
  siteId: string
  pid: string
  code: SiteErrorCodeValue
  message: string
  data?: Record<string, unknown>
}

/**
 * Records a site error; nothing when the site is gone (deleted while its run reported): its errors
 * would go with it anyway. The site's row is read in the insert, and a delete that commits between
 * that read and the foreign key check is the one race left, which the violation tells.
 */
export async function addSiteError(db: DbHandle, error: NewSiteError): Promise<void> {
  const { type, classification } = severityOf(error.code)
  try {
    await db
      .insertInto('site_error')
      .columns(['account_id', 'site_id', 'pid', 'error', 'type', 'classification', 'message', 'data'])
      .expression(
        db
          .selectFrom('site')
          .select([
            'account_id',
            'id',
            sql<string>`${error.pid}::uuid`.as('pid'),
            sql<number>`${error.code}::integer`.as('error'),
            sql<string>`${type}::text`.as('type'),
            sql<string>`${classification}::text`.as('classification'),
            sql<string>`${error.message}::text`.as('message'),
            sql<string>`${JSON.stringify(error.data ?? {})}::jsonb`.as('data'),
          ])
          .where('account_id', '=', error.accountId)
          .where('id', '=', error.siteId),
      )
      .execute()
  } catch (failure) {
    if (sqlState(failure) !== FOREIGN_KEY_VIOLATION) throw failure
  }
}

const FOREIGN_KEY_VIOLATION = '23503'

/** Reports site errors of one run of a site: the run's code, message and context values. */
export type SiteErrorReporter = (code: SiteErrorCodeValue, message: string, data: Record<string, unknown>) => Promise<void>

export function siteErrorReporter(db: DbHandle, site: { account_id: string; id: string }, pid: string): SiteErrorReporter {
  return (code, message, data) => addSiteError(db, { accountId: site.account_id, siteId: site.id, pid, code, message, data })
}

export interface ErrorPage {
  pid?: string | undefined
  limit: number
  offset: number
}

/** Errors of one run of the site: `pid`, or by default the site's latest run. */
export async function listSiteErrors(db: DbHandle, accountId: string, siteSegment: string, page: ErrorPage): Promise<{ siteId: string; errors: SiteError[] }> {
  return errorsOfSite(db, await getSite(db, accountId, siteSegment), page)
}

/** Errors of one run of a site already resolved: `pid`, or by default the site's latest run. */
export async function errorsOfSite(db: DbHandle, site: Site, page: ErrorPage): Promise<{ siteId: string; errors: SiteError[] }> {
  const accountId = site.account_id
  let pid = page.pid
  if (pid === undefined || pid === '') {
    const latest = await latestRunPid(db, accountId, site.id)
    if (latest === undefined) return { siteId: site.id, errors: [] }
    pid = latest
  }
  // A pid that is not a UUID names no run: an empty list, as for a run without errors.
  if (!isUuid(pid)) return { siteId: site.id, errors: [] }
  const errors = await db
    .selectFrom('site_error')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('site_id', '=', site.id)
    .where('pid', '=', pid)
    .orderBy('id')
    .limit(page.limit)
    .offset(page.offset)
    .execute()
  return { siteId: site.id, errors }
}

/** The codes of the site errors a run wrote, in the order first written, each once (for the run's end line). */
export async function runErrorCodes(db: DbHandle, accountId: string, siteId: string, pid: string): Promise<number[]> {
  const rows = await db
    .selectFrom('site_error')
    .select('error')
    .where('account_id', '=', accountId)
    .where('site_id', '=', siteId)
    .where('pid', '=', pid)
    .orderBy('id')
    .execute()
  return [...new Set(rows.map((row) => row.error))]
}
