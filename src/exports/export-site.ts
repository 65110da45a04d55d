import { counted } from '../input/text-input.js'
import type { Db } from '../db/database.js'
import type { Channel, ChannelHold, Run, Site } from '../db/schema.js'
import type { FeedStorage } from '../feeds/feed-storage.js'
import { RunFailure, SiteErrorCode } from '../sites/run-failure.js'
import { siteErrorReporter } from '../sites/site-errors.js'
import { exportChannel, type ExportLimits } from './export-channel.js'
import { reportFailedChecks } from './check-reports.js'
import { recordChannelExport, recordHeldExport } from './export-history.js'
import { channelExportMessage } from './export-messages.js'
import type { ExportCounts } from './export-delta.js'
import { channelsOfRun, recordFailedExport } from './export-store.js'

/** The channels an export action runs: one channel, every channel of an export template, or all. */
async function channelsFor(db: Db, site: Site, run: Run): Promise<Channel[]> {
  const channels = await channelsOfRun(db, site, run)
  if (channels.length === 0 && (run.action === 'channel' || run.action === 'export')) {
    throw new RunFailure(
      SiteErrorCode.channelNotFound,
      `Site ${site.id} has no ${run.action === 'channel' ? 'channel' : 'channel using export template'} ${run.target_id}`,
      { id: run.target_id },
    )
  }
  return channels
}

/** Which site to export for which run, and what the export works with besides its database. */
export interface ExportSiteRequest {
  storage: FeedStorage
  site: Site
  run: Run
  now: () => Date
  limits: ExportLimits
  /** Hears of replaced feed files that could not be removed once their export committed. */
  onHookError?: (error: unknown) => void
  /** Hears of each channel exported, with its delta counts, once committed (the run's end line shows them). */
  onChannelExported?: (channelId: string, counts: ExportCounts) => void
}

/**
 * Exports a site's channels for an export action. Inactive channels are skipped. A channel that fails
 * keeps its previous files and stage, leaves a failed history entry and a site error, and fails the
 * run once every other channel had its turn. A channel a safety stop holds keeps its files too, and
 * leaves a held history entry and a site error; the run succeeds, and its message says why.
 */
export async function exportSite(db: Db, request: ExportSiteRequest): Promise<string> {
  const { storage, site, run, now, limits, onHookError } = request
  const report = siteErrorReporter(db, site, run.pid)
  const channels = await channelsFor(db, site, run)
  const active = channels.filter((channel) => channel.active)
  if (active.length === 0) {
    const message = channels.length === 0 ? 'Nothing to export: the site has no channel configured' : 'Nothing to export: every channel of the run is inactive'
    await report(SiteErrorCode.nothingToExport, message, { action: run.action, id: run.target_id })
    return message
  }
  const failed: string[] = []
  const messages: string[] = []
  let queued = 0
  for (const channel of active) {
    const start = now()
    try {
      // The files this export replaced are removed when its transaction commits (exportChannel).
      const result = await exportChannel(db, { storage, site, channel, pid: run.pid, now: start, limits, onHookError })
      const record = { site, channel, pid: run.pid, start, end: now(), result }
      if (result.held) {
        await recordHeldExport(db, record)
        await report(SiteErrorCode.exportHeld, result.held.message, heldData(channel, result.held))
      } else {
        queued += await recordChannelExport(db, record)
        request.onChannelExported?.(channel.id, result.counts)
      }
      await reportFailedChecks(report, channel, result.checks)
      messages.push(channelExportMessage(channel, result))
    } catch (error) {
      const message = error instanceof RunFailure ? error.message : `Channel ${channel.id} could not be exported; its previous files are kept`
      await report(error instanceof RunFailure ? error.code : SiteErrorCode.exportFailed, message, {
        ...(error instanceof RunFailure ? error.data : {}),
        channel_id: channel.id,
      })
      await recordFailedExport(db, {
        account_id: site.account_id,
        site_id: site.id,
        channel_id: channel.id,
        pid: run.pid,
        export_start: start,
        export_time: now(),
      })
      if (!(error instanceof RunFailure)) throw error
      failed.push(channel.id)
    }
  }
  if (failed.length > 0)
    throw new RunFailure(SiteErrorCode.exportFailed, `Channels ${failed.join(', ')} failed to export; see the site errors`, { channels: failed })
  // Delivery to http destinations follows the run (channel-pushes.ts): the run succeeded once its
  // files are written; the history's `uploaded` and site errors 2003 tell how delivery went.
  const delivery = queued > 0 ? `; ${counted(queued, 'file')} queued for delivery to the channels' destinations` : ''
  return `${messages.join('; ')}${delivery}`
}

/** The site error's data of a held export: the figures, the stop and the release address. */
function heldData(channel: Channel, hold: ChannelHold): Record<string, unknown> {
  const { pid, reason, products, products_previous, products_checked, products_left_out, threshold, min_products } = hold
  const release = `/platform/v2/sites/${channel.site_id}/channels/${channel.id}/release`
  return { channel_id: channel.id, pid, reason, products, products_previous, products_checked, products_left_out, threshold, min_products, release }
}
