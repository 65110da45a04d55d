import type { DbHandle } from '../db/database.js'
import type { ChannelExport, DataSource, ImportHistory, Site, SiteError } from '../db/schema.js'
import { checksOfChannel, type ChannelChecks } from './channel-diagnostics.js'
import { channelsOfSite, exportHistoryOf, type ChannelDetails } from './channels.js'
import { siteRunsPage } from '../runs/run-reports.js'
import { importHistoryOfSite } from '../sites/import-history.js'
import { errorsOfSite } from '../sites/site-errors.js'
import { sourcesOfSite } from '../sites/site-sources.js'
import { getSite } from '../sites/sites.js'

// Here rather than in sites/: a site's page shows its channels, and channels/ builds on sites/.

/** What the console's page of one site shows, read for it by siteDashboard. */
export interface SiteDashboard {
  site: Site
  /** The page of runs asked for, newest first. */
  runs: Awaited<ReturnType<typeof siteRunsPage>>
  /** The latest runs and imports, for the charts. */
  recentRuns: Awaited<ReturnType<typeof siteRunsPage>>
  imports: ImportHistory[]
  /** The errors of run `errorsOf` (the latest run by default). */
  errors: SiteError[]
  sources: DataSource[]
  /** Every channel of the site, for its hold banners. */
  channels: ChannelDetails[]
  /** The first channels, each with its export history and what its template checked. */
  shownChannels: { details: ChannelDetails; history: ChannelExport[]; checks: ChannelChecks }[]
}

export interface SiteDashboardRequest {
  runs: { limit: number; offset: number }
  /** Runs and imports in the charts. */
  chartPoints: number
  /** The run whose errors are shown; the latest when empty. */
  errorsOf: string
  /** Channels shown with their history and checks: a site may have thousands. */
  channelsShown: number
}

/** The site (of the account) and everything its console page shows, the site resolved once and each channel read by its id. */
export async function siteDashboard(db: DbHandle, accountId: string, siteSegment: string, request: SiteDashboardRequest): Promise<SiteDashboard> {
  const site = await getSite(db, accountId, siteSegment)
  const [runs, recentRuns, imports, errors, sources, channels] = await Promise.all([
    siteRunsPage(db, accountId, site.id, request.runs),
    siteRunsPage(db, accountId, site.id, { limit: request.chartPoints, offset: 0 }),
    importHistoryOfSite(db, site, { limit: request.chartPoints, offset: 0 }),
    errorsOfSite(db, site, { pid: request.errorsOf || undefined, limit: 1000, offset: 0 }).then((page) => page.errors),
    sourcesOfSite(db, site, { limit: 100, cursor: 0 }).then((page) => page.sources),
    channelsOfSite(db, site),
  ])
  const shownChannels = await Promise.all(
    channels.slice(0, request.channelsShown).map(async (details) => ({
      details,
      history: await exportHistoryOf(db, accountId, details.channel.id),
      checks: await checksOfChannel(db, details.channel),
    })),
  )
  return { site, runs, recentRuns, imports, errors, sources, channels, shownChannels }
}
