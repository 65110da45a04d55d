import pg from 'pg'
import { ChannelSettingError, checkFilenames, checkMapping, resolveFilename } from '../channels/channel-settings.js'
import type { Channel, ChannelFilename, ColumnMapping, Site } from '../db/schema.js'
import { FeedTooLargeError, unwritableColumns, UnwritableColumnsError, type UnwritableColumns } from '../feeds/feed-writer.js'
import { RunFailure, SiteErrorCode } from '../sites/run-failure.js'

// An export fails for one of two reasons: the tenant's data or configuration asks for something that
// cannot be written (a site error the site's owner can act on, not retried), or something went wrong
// underneath (the database went away, the disk is full): an unexpected failure, retried once.

/** A channel's settings as its export uses them. */
export interface ExportSettings {
  /** The channel's mapping, or without one the import stage's columns passed through. */
  mapping: ColumnMapping[]
  /** Each filename template with its name for this export. */
  files: { entry: ChannelFilename; filename: string }[]
}

/**
 * The channel's settings checked, before any work, by the rules a save checks them by
 * (channel-settings.ts): a channel stored before a rule existed fails here once, with the setting to
 * change, instead of failing halfway in a way that would be retried. Columns taken from the import
 * stage meet the format's rule only here.
 */
export function exportSettings(site: Site, channel: Channel, stageColumns: string[], now: Date, ruleColumns: string[] = []): ExportSettings {
  const ids = { siteId: site.id, channelId: channel.id }
  let mapped: ColumnMapping[]
  let filenames: ChannelFilename[]
  try {
    mapped = checkMapping(channel.mapping, channel.format)
    filenames = checkFilenames(channel.filenames, ids, now)
  } catch (error) {
    throw exportFailure(error, channel)
  }
  const mapping = mapped.length > 0 ? mapped : stageColumns.map((column) => ({ column, source: column }))
  // The columns the channel's rules create follow the mapping's, and meet the format's rule alike.
  const columns = mapping.map((m) => m.column)
  const problem = unwritableColumns([...columns, ...ruleColumns.filter((column) => !columns.includes(column))], channel.format)
  if (problem) throw unwritable(channel, problem)
  return { mapping, files: filenames.map((entry) => ({ entry, filename: resolveFilename(entry.filename, ids, now) })) }
}

/**
 * A failure of a channel's export as the site error it is when the channel's data or configuration
 * caused it; any other failure is returned as it is. `file` names the file being written, if any.
 */
export function exportFailure(error: unknown, channel: Channel, file?: { filename: string }): unknown {
  if (error instanceof FeedTooLargeError) {
    const filename = file?.filename ?? ''
    return new RunFailure(
      SiteErrorCode.feedTooLarge,
      `Channel ${channel.id}: the file ${JSON.stringify(filename)} would be larger than FEED_MAX_BYTES (${error.maxBytes} bytes) and was not written; ` +
        'its previous files are kept. Export fewer rows (a filter) or fewer columns (a mapping)',
      { channel_id: channel.id, filename, limit: error.maxBytes },
    )
  }
  if (error instanceof UnwritableColumnsError) return unwritable(channel, error.problem)
  if (error instanceof ChannelSettingError) {
    return new RunFailure(
      SiteErrorCode.channelUnwritable,
      `Channel ${channel.id}: ${error.message}. Change this setting of the channel; its previous files are kept`,
      {
        channel_id: channel.id,
        field: error.field,
      },
    )
  }
  // Data exceptions (class 22) and program limits (class 54) come from what the export was asked to
  // do, never from the state of the server: the same export would fail again on a retry.
  if (error instanceof pg.DatabaseError && /^(22|54)/.test(error.code ?? '')) {
    return new RunFailure(
      SiteErrorCode.channelUnwritable,
      `Channel ${channel.id} could not be exported: the database refused its data or configuration (${error.message}); its previous files are kept`,
      { channel_id: channel.id, sqlstate: error.code },
    )
  }
  return error
}

function unwritable(channel: Channel, problem: UnwritableColumns): RunFailure {
  const named = problem.column !== undefined
  const fix =
    channel.mapping.length === 0
      ? "the channel has no mapping, so its columns are the intermediate stage's (the import stage's and those its site rules create): give it a mapping " +
        (named ? 'that names this column differently or leaves it out' : 'with fewer columns')
      : named
        ? "rename this column in the channel's mapping"
        : "map fewer columns in the channel's mapping"
  return new RunFailure(SiteErrorCode.channelUnwritable, `Channel ${channel.id}: ${problem.reason}; ${fix}. Its previous files are kept`, {
    channel_id: channel.id,
    format: channel.format,
    ...(named ? { column: problem.column } : {}),
  })
}
