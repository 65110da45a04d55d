import type { Db } from '../db/database.js'
import type { Channel, Site } from '../db/schema.js'
import { inTransaction, type Tx } from '../db/transaction.js'
import type { FeedStorage } from '../feeds/feed-storage.js'
import { classifyRows, firstExportCounts, replaceStage, storeFirstExport, type ExportCounts } from './export-delta.js'
import { exportFailure } from './export-failures.js'
import { ChannelFiles, type ExportedFile } from './export-files.js'
import { planExport, type ExportLimits, type ExportPlan } from './export-plan.js'
import { channelStageRowCount, replaceFeedFileRows, saveChannelStage } from './export-store.js'

export type { ExportCounts } from './export-delta.js'
export type { ExportedFile } from './export-files.js'
export type { ExportLimits } from './export-plan.js'

export interface ChannelExportResult {
  counts: ExportCounts
  files: ExportedFile[]
}

/**
 * Exports one channel: the import stage through the channel's filter and mapping into the channel
 * stage and its files, with the delta against the previous export. One transaction: a failure keeps
 * the previous stage and files; files are written under keys of their own and only become the
 * channel's files when the transaction commits, after which the files they replaced are removed.
 */
export async function exportChannel(
  db: Db,
  storage: FeedStorage,
  site: Site,
  channel: Channel,
  pid: string,
  now: Date,
  limits: ExportLimits,
  onHookError?: (error: unknown) => void,
): Promise<ChannelExportResult> {
  const plan = await planExport(db, site, channel, pid, now, limits)
  const files = new ChannelFiles(storage, plan)
  try {
    const counts = await inTransaction(
      db,
      async (tx) => {
        const previous = await channelStageRowCount(tx.db, site.id, channel.id)
        // A first export has nothing to compare with, unless a delta file asks for its rows by kind.
        const first = previous === 0 && plan.files.every(({ entry }) => entry.type === null)
        const counts = first ? await firstExport(db, tx, plan, files) : await laterExport(tx, plan, files, previous)
        await recordFiles(tx, storage, plan, files, counts)
        return counts
      },
      { onHookError },
    )
    return { counts, files: files.exported() }
  } catch (error) {
    await files.abandon()
    throw exportFailure(error, channel)
  }
}

/**
 * The rows go straight into the channel stage. When they are the import stage's as they are, the
 * files are written from the import stage on a second connection while the stage is filled,
 * instead of after it: the import stage cannot change meanwhile (one run per site at a time).
 */
async function firstExport(db: Db, tx: Tx, plan: ExportPlan, files: ChannelFiles): Promise<ExportCounts> {
  const stored = storeFirstExport(tx, plan)
  const written = plan.passThrough ? inTransaction(db, (reader) => files.write(tx, ['all'], reader.client, plan.importRowsSql)) : Promise.resolve()
  const [inserted, wrote] = await Promise.allSettled([stored, written])
  if (inserted.status === 'rejected') throw inserted.reason
  if (wrote.status === 'rejected') throw wrote.reason
  // Otherwise from the new stage, in its index order (no sort).
  if (!plan.passThrough) await files.write(tx, ['all'], tx.client)
  return firstExportCounts(inserted.value)
}

/**
 * Each row is classified against the previous export; delta files need the previous rows, so they
 * are written before the stage changes, full files after, from the new stage in its index order.
 */
async function laterExport(tx: Tx, plan: ExportPlan, files: ChannelFiles, previous: number): Promise<ExportCounts> {
  const counts = await classifyRows(tx, plan, previous)
  await files.write(tx, ['new', 'modified', 'unchanged', 'deleted'], tx.client)
  await replaceStage(tx, plan, counts)
  await files.write(tx, ['all'], tx.client)
  return counts
}

/**
 * The channel stage's bookkeeping and the feed_file rows that make the written files the channel's.
 * The files take their final keys before the commit that points at them; the files they replace go
 * after it, never before (a rollback keeps them the channel's).
 */
async function recordFiles(tx: Tx, storage: FeedStorage, plan: ExportPlan, files: ChannelFiles, counts: ExportCounts): Promise<void> {
  await saveChannelStage(tx.db, plan.site, plan.channel.id, plan.columns, counts.now)
  const replaced = await replaceFeedFileRows(tx.db, plan.site.account_id, plan.channel.id, files.records(), plan.now)
  await files.publish()
  // A removal that fails leaves files no row names: never served, and the export itself succeeded.
  tx.onCommit(() => storage.remove(replaced))
}
