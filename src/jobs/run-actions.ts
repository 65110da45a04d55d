import fs from 'node:fs/promises'
import path from 'node:path'
import type { Db } from '../db/database.js'
import type { Process } from '../db/schema.js'
import type { ExportLimits } from '../exports/export-channel.js'
import { exportSite } from '../exports/export-site.js'
import { storageKeyOf, storagePath } from '../feeds/feed-storage.js'
import type { CatalogLimits } from '../imports/build-stage.js'
import { importSite } from '../imports/import-site.js'
import { latestBatchSeq } from './process-store.js'
import { RunFailure, SiteErrorCode } from '../sites/run-failure.js'

/** What a run has touched so far, for the worker to undo when the run's site is deleted under it. */
export interface RunTrace {
  /** The channels whose files the run may have written (DATA_DIR/feeds/<channel>/<pid>). */
  channelIds: string[]
}

/**
 * What a run does, by action. Returns the run's closing message; throws RunFailure for a failure
 * the site's owner can act on, anything else for a failure worth a retry.
 */
export async function performRun(db: Db, dataDir: string, run: Process, now: () => Date, limits: CatalogLimits & ExportLimits, trace?: RunTrace): Promise<string> {
  const site = await db.selectFrom('site').selectAll().where('account_id', '=', run.account_id).where('id', '=', run.site_id).executeTakeFirst()
  // The worker finds the site gone and stops the run without a site error (the site has none left).
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
    else {
      if (trace) {
        const channels = await db.selectFrom('channel').select('id').where('account_id', '=', site.account_id).where('site_id', '=', site.id).execute()
        trace.channelIds = channels.map((channel) => channel.id)
      }
      messages.push(await exportSite(db, dataDir, site, run, now, limits))
    }
  }
  return messages.join('; ')
}

/**
 * Removes the files a run exported (each under a directory of its own, named by the run's pid), for
 * a run whose site was deleted: an export that committed just before the delete left them, and no
 * row points at them any more. Files of earlier runs are not the run's to remove.
 */
export async function removeRunFeeds(dataDir: string, channelIds: string[], pid: string): Promise<void> {
  for (const channelId of channelIds) {
    await fs.rm(path.dirname(storagePath(dataDir, storageKeyOf(channelId, pid, '-'))), { recursive: true, force: true })
  }
}
