import type { Db } from '../db/database.js'
import type { Run, Site } from '../db/schema.js'
import type { ExportLimits } from '../exports/export-channel.js'
import { exportSite } from '../exports/export-site.js'
import { siteChannelIds } from '../exports/export-store.js'
import { exportKeyPrefix, type FeedStorage } from '../feeds/feed-storage.js'
import type { CatalogLimits } from '../imports/build-stage.js'
import { importSite, type ImportObserver } from '../imports/import-site.js'
import type { SourceFetching } from '../imports/fetched-source.js'
import { findRunSite, latestBatchSeq } from '../runs/run-store.js'
import { RunFailure, SiteErrorCode } from '../sites/run-failure.js'
import type { ChannelCounts } from './run-observer.js'

/**
 * What a run has done so far: what the worker undoes when the run's site is deleted under it, and
 * the counts its end line shows, as far as the run got (an `all` run whose export fails still
 * shows what its import did).
 */
export interface RunTrace {
  /** The channels whose files the run may have written (keys under <channel>/<pid>/). */
  channelIds: string[]
  /** Products in the import stage that the run's import built. */
  products?: number
  /** The channels exported, in order, each with its delta. */
  channels: ChannelCounts[]
}

/** What a run works with besides its database and its row: the same for every run of a worker. */
export interface RunContext {
  storage: FeedStorage
  now: () => Date
  limits: CatalogLimits & ExportLimits
  /** Hears of replaced feed files that could not be removed once their export committed (the export succeeded). */
  onHookError?: (error: unknown) => void
  /** Hears of the batches each import applies (the metrics, the run log). */
  observer?: ImportObserver
  /** How imports fetch the sites' feed URL and SFTP sources. */
  fetching?: SourceFetching
}

/**
 * What a run does, by action. Returns the run's closing message; throws RunFailure for a failure
 * the site's owner can act on, anything else for a failure worth a retry.
 */
export async function performRun(db: Db, run: Run, context: RunContext, trace?: RunTrace): Promise<string> {
  const site = await runnableSite(db, run)
  const messages: string[] = []
  if (run.action === 'import' || run.action === 'all') messages.push(await runImport(db, site, run, context, trace))
  if (run.action !== 'import') messages.push(await runExport(db, site, run, context, trace))
  return messages.join('; ')
}

/** The run's site, if it may run: still there and not disabled. */
async function runnableSite(db: Db, run: Run): Promise<Site> {
  const site = await findRunSite(db, run)
  // The worker finds the site gone and stops the run without a site error (the site has none left).
  if (!site) throw new RunFailure(SiteErrorCode.internalFailure, 'The site was deleted while its run waited')
  if (site.status === 'disabled') throw new RunFailure(SiteErrorCode.siteDisabled, `Site ${site.id} was disabled before the run started: nothing was run`)
  return site
}

async function runImport(db: Db, site: Site, run: Run, { now, limits, observer, fetching }: RunContext, trace?: RunTrace): Promise<string> {
  const upToSeq = await latestBatchSeq(db)
  const { productCount } = await importSite(db, site, { pid: run.pid, upToSeq, now, limits, observer, fetching })
  if (trace) trace.products = productCount
  return `Imported ${productCount} products`
}

async function runExport(db: Db, site: Site, run: Run, { storage, now, limits, onHookError }: RunContext, trace?: RunTrace): Promise<string> {
  if (site.status === 'paused_upload') return 'Not exported: the site is paused_upload'
  if (trace) trace.channelIds = await siteChannelIds(db, site)
  return exportSite(db, {
    storage,
    site,
    run,
    now,
    limits,
    onHookError,
    onChannelExported: (channel, { new: added, modified, deleted, unchanged }) => trace?.channels.push({ channel, new: added, modified, deleted, unchanged }),
  })
}

/**
 * Removes the files a run exported (each under keys of its own, named by the run's pid), for a run
 * whose site was deleted: an export that committed just before the delete left them, and no row
 * points at them any more. Files of earlier runs are not the run's to remove.
 */
export async function removeRunFeeds(storage: FeedStorage, channelIds: string[], pid: string): Promise<void> {
  for (const channelId of channelIds) await storage.removePrefix(exportKeyPrefix(channelId, pid))
}
