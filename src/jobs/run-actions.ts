import type { Db } from '../db/database.js'
import type { Process } from '../db/schema.js'
import type { ExportLimits } from '../exports/export-channel.js'
import { exportSite } from '../exports/export-site.js'
import type { CatalogLimits } from '../imports/build-stage.js'
import { importSite } from '../imports/import-site.js'
import { latestBatchSeq } from './process-store.js'
import { RunFailure, SiteErrorCode } from './run-failure.js'

/**
 * What a run does, by action. Returns the run's closing message; throws RunFailure for a failure
 * the site's owner can act on, anything else for a failure worth a retry.
 */
export async function performRun(db: Db, dataDir: string, run: Process, now: () => Date, limits: CatalogLimits & ExportLimits): Promise<string> {
  const site = await db.selectFrom('site').selectAll().where('account_id', '=', run.account_id).where('id', '=', run.site_id).executeTakeFirst()
  if (!site) throw new RunFailure(SiteErrorCode.internalFailure, 'The site was deleted while its run waited')
  if (site.status === 'disabled') throw new RunFailure(SiteErrorCode.siteDisabled, `Site ${site.id} was disabled before the run started: nothing was run`)
  const messages: string[] = []
  if (run.action === 'import' || run.action === 'all') {
    const upToSeq = await latestBatchSeq(db)
    const { productCount } = await importSite(db, site, { pid: run.pid, upToSeq, now, limits })
    messages.push(`Imported ${productCount} products`)
  }
  if (run.action !== 'import') {
    if (site.status === 'paused_upload') messages.push('Not exported: the site is paused_upload')
    else messages.push(await exportSite(db, dataDir, site, run, now, limits))
  }
  return messages.join('; ')
}
