import type { DbHandle } from '../db/database.js'
import type { ImportHistory, Site } from '../db/schema.js'
import { getSite } from './sites.js'

export async function addImportHistory(
  db: DbHandle,
  entry: { accountId: string; siteId: string; pid: string; productCount: number; importTime: Date },
): Promise<void> {
  await db
    .insertInto('import_history')
    .values({ account_id: entry.accountId, site_id: entry.siteId, pid: entry.pid, product_count: entry.productCount, import_time: entry.importTime })
    .execute()
}

/** The site's imports, newest first. */
export async function listImportHistory(
  db: DbHandle,
  accountId: string,
  siteSegment: string,
  page: { limit: number; offset: number },
): Promise<ImportHistory[]> {
  return importHistoryOfSite(db, await getSite(db, accountId, siteSegment), page)
}

/** The imports of a site already resolved, newest first. */
export function importHistoryOfSite(db: DbHandle, site: Site, page: { limit: number; offset: number }): Promise<ImportHistory[]> {
  return db
    .selectFrom('import_history')
    .selectAll()
    .where('account_id', '=', site.account_id)
    .where('site_id', '=', site.id)
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute()
}
