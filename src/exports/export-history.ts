import type { Db, DbHandle } from '../db/database.js'
import { recordActivity } from '../activity/activity-store.js'
import type { ChannelDestination, Channel, ChannelExport, Site } from '../db/schema.js'
import { inTransaction, type Tx } from '../db/transaction.js'
import { feedUrl } from '../feeds/feed-urls.js'
import { recordEvent } from '../webhooks/outbox.js'
import { exportFinishedData, exportHeldData, readinessChangedData } from '../webhooks/payloads.js'
import { checksData, readinessCrossing } from './check-reports.js'
import type { ChannelExportResult, ExportedFile } from './export-channel.js'
import { channelExportMessage } from './export-messages.js'
import { setChannelHold } from './export-store.js'

// What a successful channel export leaves behind once its files are written: its history entry, the
// export.finished event, and the pushes of its files to the channel's http destinations (sent by the
// push worker after the run: src/exports/channel-pushes.ts). The entry's `uploaded` is 1 at once
// when there is nothing to push, else once every push arrived.

export interface ExportRecord {
  site: Site
  channel: Channel
  pid: string
  start: Date
  end: Date
  result: ChannelExportResult
}

type Destination = Pick<ChannelDestination, 'id' | 'kind' | 'url' | 'settings'>

/** One file to one destination. */
interface PlannedPush {
  destination: Destination
  file: ExportedFile
}

/** Writes the history entry of a successful export, announces it and queues its pushes; returns how many. */
export async function recordChannelExport(db: Db, record: ExportRecord): Promise<number> {
  return inTransaction(db, async (tx) => {
    const { site, channel, result } = record
    const destinations = await pushDestinations(tx.db, site, channel)
    const pushes = destinations.flatMap((destination) => result.files.map((file) => ({ destination, file })))
    const entry = await insertHistoryEntry(tx.db, record, pushes.length === 0)
    await announceExport(tx, record, entry)
    await queuePushes(tx.db, record, entry, pushes)
    return pushes.length
  })
}

/** The channel's active destinations that files are sent to (http, sftp, ftps), in a stable order. */
async function pushDestinations(db: DbHandle, site: Site, channel: Channel): Promise<Destination[]> {
  return db
    .selectFrom('channel_destination')
    .select(['id', 'kind', 'url', 'settings'])
    .where('account_id', '=', site.account_id)
    .where('channel_id', '=', channel.id)
    .where('kind', 'in', ['http', 'sftp', 'ftps'])
    .where('active', '=', true)
    .orderBy('id')
    .execute()
}

/** Where a push goes, as its row and the site error of a failed one show it: a URL, or the file server without its credentials. */
function pushTarget(destination: Destination): string {
  if (destination.kind === 'http' || !destination.settings) return destination.url ?? ''
  const { user, host, port, directory } = destination.settings
  return `${destination.kind}://${encodeURIComponent(user)}@${host.includes(':') ? `[${host}]` : host}:${port}/${directory.replace(/^\/+/, '')}`
}

/**
 * A held export's record, in one transaction: the channel's hold, a history entry with process
 * status `held` and the counts it would have published (nothing uploaded), and export.held.
 */
export async function recordHeldExport(db: Db, record: ExportRecord): Promise<void> {
  const { site, channel, result } = record
  const hold = result.held
  if (!hold) return
  await inTransaction(db, async (tx) => {
    await setChannelHold(tx.db, channel, hold)
    const entry = await insertHistoryEntry(tx.db, record, false, 'held')
    await recordEvent(tx, site.account_id, 'export.held', exportHeldData(entry, hold, checksData(channel, result.checks)))
    await recordActivity(tx.db, {
      accountId: site.account_id,
      action: 'export.held',
      target: { type: 'channel', id: channel.id, siteId: site.id },
      changes: { hold: [null, { pid: hold.pid, reason: hold.reason, message: hold.message }] },
    })
  })
}

/** The export's history entry, with its delta counts; `uploaded` already when nothing is to be pushed. */
async function insertHistoryEntry(
  db: DbHandle,
  { site, channel, pid, start, end, result }: ExportRecord,
  uploaded: boolean,
  status: 'success' | 'held' = 'success',
): Promise<ChannelExport> {
  const { counts } = result
  return db
    .insertInto('channel_export')
    .values({
      account_id: site.account_id,
      site_id: site.id,
      channel_id: channel.id,
      pid,
      export_start: start,
      export_time: end,
      process_status: status,
      product_count: counts.now,
      product_count_now: counts.now,
      product_count_previous: counts.previous,
      product_count_new: counts.new,
      product_count_modified: counts.modified,
      product_count_deleted: counts.deleted,
      product_count_unchanged: counts.unchanged,
      product_count_skipped: result.checks.leftOut,
      uploaded: uploaded ? 1 : 0,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** export.finished, committed with the entry: the feed URLs as paths, made absolute under PUBLIC_URL when delivered. */
async function announceExport(tx: Tx, { site, channel, result }: ExportRecord, entry: ChannelExport): Promise<void> {
  const feed = await tx.db
    .selectFrom('channel_destination')
    .select('token')
    .where('account_id', '=', site.account_id)
    .where('channel_id', '=', channel.id)
    .where('kind', '=', 'feed')
    .where('active', '=', true)
    .executeTakeFirst()
  const token = feed?.token
  const feedUrls = token ? result.files.map((file) => feedUrl('', token, file.filename)) : []
  const message = channelExportMessage(channel, result)
  await recordEvent(tx, site.account_id, 'export.finished', exportFinishedData(entry, checksData(channel, result.checks), { message, feedUrls }))
  const crossing = readinessCrossing(channel, result.checks, result.previousChecks)
  if (crossing) await recordEvent(tx, site.account_id, 'channel.readiness_changed', readinessChangedData(entry, crossing))
}

/** A pending push of every file to every destination it is sent to, sent by the push worker after the run. */
async function queuePushes(db: DbHandle, { site, channel, pid }: ExportRecord, entry: ChannelExport, pushes: PlannedPush[]): Promise<void> {
  if (pushes.length === 0) return
  await db
    .insertInto('channel_push')
    .values(
      pushes.map(({ destination, file }) => ({
        account_id: site.account_id,
        site_id: site.id,
        channel_id: channel.id,
        export_id: entry.id,
        pid,
        url: pushTarget(destination),
        kind: destination.kind,
        destination_id: destination.id,
        storage_key: file.storageKey,
        filename: file.filename,
        content_type: file.contentType,
        locked_until: null,
        budget_ends_at: null,
        note: null,
        finished_at: null,
      })),
    )
    .execute()
}
