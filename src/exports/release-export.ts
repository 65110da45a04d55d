import { getChannel, type ChannelDetails } from '../channels/channels.js'
import type { Db } from '../db/database.js'
import { ConflictError } from '../errors.js'
import type { FeedStorage } from '../feeds/feed-storage.js'
import { RunFailure } from '../sites/run-failure.js'
import { getSite } from '../sites/sites.js'
import { exportChannel, type ExportLimits } from './export-channel.js'
import { recordChannelExport } from './export-history.js'

/** What a release works with besides the database. */
export interface ReleaseContext {
  storage: FeedStorage
  limits: ExportLimits
  now: () => Date
  onHookError?: (error: unknown) => void
}

/**
 * Publishes a channel's held export as it was computed: the same run's export again, under the
 * channel's export lock, with the safety stops off, if what it was made from is unchanged (a 409
 * otherwise, and for a channel without a hold, or one whose hold is not of `pid` when given). One
 * transaction, as every export: a crash leaves the old file or the new one, never a mix. Then its
 * history entry, export.finished and its pushes, as a run's export has them.
 */
export async function releaseHeldExport(
  db: Db,
  context: ReleaseContext,
  target: { accountId: string; siteSegment: string; channelId: string; pid?: string | null },
): Promise<ChannelDetails> {
  const { accountId, siteSegment, channelId, pid } = target
  const { channel } = await getChannel(db, accountId, siteSegment, channelId)
  const hold = channel.hold
  if (hold === null) throw new ConflictError(`Channel ${channel.id} has no held export: nothing to release`)
  if (pid && pid !== hold.pid) throw new ConflictError(`Channel ${channel.id}'s held export is of run ${hold.pid}, not ${pid.slice(0, 64)}`)
  const site = await getSite(db, accountId, channel.site_id)
  if (site.status !== 'active') throw new ConflictError(`Site ${site.id} is ${site.status}: it does not export; make it active before releasing`)
  const start = new Date(hold.export_start)
  try {
    const result = await exportChannel(db, { ...context, site, channel, pid: hold.pid, now: start, release: hold })
    await recordChannelExport(db, { site, channel, pid: hold.pid, start, end: context.now(), result })
  } catch (error) {
    // What the channel's data or settings keep from being exported is the client's to change.
    if (error instanceof RunFailure) throw new ConflictError(`${error.message}: the held export was not released`)
    throw error
  }
  return getChannel(db, accountId, site.id, channel.id)
}
