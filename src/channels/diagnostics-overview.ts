import type { DbHandle } from '../db/database.js'
import type { Channel, Site } from '../db/schema.js'
import { AppError } from '../errors.js'
import { getSite } from '../sites/sites.js'
import type { CheckCode } from '../templates/template-codes.js'
import { checksOfChannel, diagnosticsOfChannel, type ChannelChecks, type ChannelDiagnostics, type DiagnosticsQuery } from './channel-diagnostics.js'
import { getChannel } from './channels.js'
import { failingValues } from './failing-values.js'

/** What a channel's diagnostics page shows: one page of its failed checks, or why the filter was refused, and the values behind some codes. */
export interface DiagnosticsOverview {
  site: Site
  channel: Channel
  checks: ChannelChecks
  /** The page of failed checks; none when the filter was refused. */
  found?: ChannelDiagnostics
  /** The message of a filter the template refused (a 400 of the domain). */
  problem?: string
  /** For each code `valuesOf` chose among the failing ones, its distinct failing values. */
  failing: Record<string, string[]>
}

/**
 * The site and channel (of the account), resolved once, with one page of the channel's failed checks
 * filtered by `query`, and for the failing codes that `valuesOf` picks, their failing values.
 */
export async function diagnosticsOverview(
  db: DbHandle,
  target: { accountId: string; siteSegment: string; channelId: string },
  query: DiagnosticsQuery,
  valuesOf: (code: CheckCode) => boolean,
): Promise<DiagnosticsOverview> {
  const site = await getSite(db, target.accountId, target.siteSegment)
  const { channel } = await getChannel(db, target.accountId, site.id, target.channelId)
  const { found, problem } = await filtered(db, channel, query)
  const checks = found?.checks ?? (await checksOfChannel(db, channel))
  const picked = checks.codes.filter((code) => (checks.totals?.codes[code.code] ?? 0) > 0 && valuesOf(code))
  return { site, channel, checks, found, problem, failing: await failingValues(db, checks, picked) }
}

/** One page of the list, or the message of the filter it refused. */
async function filtered(db: DbHandle, channel: Channel, query: DiagnosticsQuery): Promise<{ found?: ChannelDiagnostics; problem?: string }> {
  try {
    return { found: await diagnosticsOfChannel(db, channel, query) }
  } catch (error) {
    // Only the filters' own refusals are the page's to show; anything else is the error page's.
    if (!(error instanceof AppError) || error.statusCode !== 400) throw error
    return { problem: error.message }
  }
}
