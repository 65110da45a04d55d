import pg from 'pg'
import type { Channel } from '../db/schema.js'
import { FeedTooLargeError, unwritableColumns, UnwritableColumnsError, type UnwritableColumns } from '../feeds/feed-writer.js'
import { RunFailure, SiteErrorCode } from '../jobs/run-failure.js'

// An export fails for one of two reasons: the tenant's data or configuration asks for something that
// cannot be written (a site error the site's owner can act on, not retried), or something went wrong
// underneath (the database went away, the disk is full): an unexpected failure, retried once.

// The longest file name common file systems take, in bytes.
const MAX_FILENAME_BYTES = 255

/** Refuses, before any work, a channel whose columns or file names its format or the disk cannot carry. */
export function checkExportable(channel: Channel, columns: string[], filenames: string[]): void {
  const problem = unwritableColumns(columns, channel.format)
  if (problem) throw unwritable(channel, problem)
  const long = filenames.find((name) => Buffer.byteLength(name) > MAX_FILENAME_BYTES)
  if (long !== undefined) {
    throw new RunFailure(
      SiteErrorCode.channelUnwritable,
      `Channel ${channel.id}: the file name ${JSON.stringify(long)} has ${Buffer.byteLength(long)} bytes once its placeholders are filled in, more than a file name can have (${MAX_FILENAME_BYTES}); shorten the channel's filename template. Its previous files are kept`,
      { channel_id: channel.id, filename: long },
    )
  }
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
      `Channel ${channel.id}: the file ${JSON.stringify(filename)} would be larger than FEED_MAX_BYTES (${error.maxBytes} bytes) and was not written; its previous files are kept. Export fewer rows (a filter) or fewer columns (a mapping)`,
      { channel_id: channel.id, filename, limit: error.maxBytes },
    )
  }
  if (error instanceof UnwritableColumnsError) return unwritable(channel, error.problem)
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
      ? `the channel has no mapping, so its columns are the import stage's: give it a mapping ${named ? 'that names this column differently or leaves it out' : 'with fewer columns'}`
      : named
        ? "rename this column in the channel's mapping"
        : "map fewer columns in the channel's mapping"
  return new RunFailure(SiteErrorCode.channelUnwritable, `Channel ${channel.id}: ${problem.reason}; ${fix}. Its previous files are kept`, {
    channel_id: channel.id,
    format: channel.format,
    ...(named ? { column: problem.column } : {}),
  })
}
