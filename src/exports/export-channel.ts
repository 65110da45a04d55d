import type { Db } from '../db/database.js'
import type { Channel, CheckTotals, Site } from '../db/schema.js'
import { inTransaction, type Tx } from '../db/transaction.js'
import type { FeedStorage } from '../feeds/feed-storage.js'
import {
  classifyAll,
  classifyChanged,
  deltaCounts,
  firstExportCounts,
  replaceStage,
  stageLineBytes,
  storeFirstExport,
  type ExportCounts,
  type StageTotals,
} from './export-delta.js'
import { countChecks, NO_CHECKS } from './check-totals.js'
import { exportFailure } from './export-failures.js'
import { ChannelFiles, type ExportedFile } from './export-files.js'
import { planExport, type ExportLimits, type ExportPlan } from './export-plan.js'
import { channelStageState, importStageOf, replaceFeedFileRows, saveChannelStage, type ChannelStageState, type ImportStage } from './export-store.js'

export type { ExportCounts } from './export-delta.js'
export type { ExportedFile } from './export-files.js'
export type { ExportLimits } from './export-plan.js'

export interface ChannelExportResult {
  counts: ExportCounts
  files: ExportedFile[]
  /** What checking the rows against the channel's template found, after this export and before it (none before the first). */
  checks: CheckTotals
  previousChecks: CheckTotals | undefined
}

/** Which channel to export, for which run, and with what. */
export interface ExportChannelRequest {
  storage: FeedStorage
  site: Site
  channel: Channel
  /** The run exporting: its files are kept under keys of its own (channel/pid/filename). */
  pid: string
  /** The export's start: what the files' names and history say. */
  now: Date
  limits: ExportLimits
  /** Hears of replaced feed files that could not be removed once the export committed. */
  onHookError?: (error: unknown) => void
}

/**
 * Exports one channel: the import stage through the channel's filter and mapping into the channel
 * stage and its files, with the delta against the previous export. One transaction: a failure keeps
 * the previous stage and files; files are written under keys of their own and only become the
 * channel's files when the transaction commits, after which the files they replaced are removed.
 */
export async function exportChannel(db: Db, request: ExportChannelRequest): Promise<ChannelExportResult> {
  const { storage, site, channel, pid, now, limits, onHookError } = request
  const plan = await planExport(db, { site, channel, pid, now, limits })
  const files = new ChannelFiles(storage, plan)
  try {
    return await inTransaction(
      db,
      async (tx) => {
        const previous = await channelStageState(tx.db, site.id, channel.id)
        const importStage = await importStageOf(tx.db, site.id)
        // A first export has nothing to compare with, unless a delta file asks for its rows by kind.
        const first = (previous?.checks?.checked ?? previous?.rows ?? 0) === 0 && plan.files.every(({ entry }) => entry.type === null)
        const { counts, totals, checks } = first ? await firstExport(tx, plan) : await laterExport(tx, plan, files, previous, importStage)
        files.recordFull(totals.lineBytes)
        await saveChannelStage(tx.db, plan.site, plan.channel.id, {
          columns: plan.columns,
          ...totals,
          build: importStage?.build ?? '0',
          signature: plan.signature,
          checks: { ...checks, template: plan.template.name },
          refersToImport: plan.refersToImport,
        })
        await recordFiles(tx, storage, plan, files)
        return { counts, files: files.exported(), checks, previousChecks: previous?.checks ?? undefined }
      },
      { onHookError },
    )
  } catch (error) {
    await files.abandon()
    throw exportFailure(error, channel)
  }
}

interface Exported {
  counts: ExportCounts
  totals: StageTotals
  checks: CheckTotals
}

/** The rows and their lines go straight into the channel stage. */
async function firstExport(tx: Tx, plan: ExportPlan): Promise<Exported> {
  const { checks, ...totals } = await storeFirstExport(tx, plan)
  return { counts: firstExportCounts(totals.rows), totals, checks }
}

/**
 * The rows the import changed since the stage's build are classified when the stage was made the
 * way this export makes it and stage_change still holds every change since; otherwise every row.
 * Delta files need export_rows and the previous rows, so they are written before the stage changes.
 */
async function laterExport(
  tx: Tx,
  plan: ExportPlan,
  files: ChannelFiles,
  previous: ChannelStageState | undefined,
  importStage: ImportStage | undefined,
): Promise<Exported> {
  const sameMaking = previous !== undefined && previous.signature === plan.signature
  const incremental = sameMaking && importStage !== undefined && BigInt(previous.build) >= BigInt(importStage.changesFrom)
  const classified = incremental && (await classifyChanged(tx, plan, previous.build, previous.rows))
  if (!classified) await classifyAll(tx, plan, { renderAll: !sameMaking, previousRefers: previous?.refersToImport ?? false })
  const previousRows = previous?.rows ?? 0
  const { lineBytesChange, stage, ...counts } = await deltaCounts(tx, previousRows)
  // Counted from the changes when the previous counts were made the same way, else from every row.
  const checks = plan.checks
    ? await countChecks(tx, plan.checks, sameMaking ? (previous.checks ?? undefined) : undefined)
    : { ...NO_CHECKS, codes: {}, checked: counts.now, exported: counts.now }
  await files.writeDeltas(tx, ['new', 'modified', 'deleted'])
  await replaceStage(tx, plan, stage, { rewrite: !sameMaking, fewRows: classified })
  await files.writeDeltas(tx, ['unchanged', 'skipped'])
  const lineBytes = sameMaking ? previous.lineBytes + lineBytesChange : await stageLineBytes(tx, plan)
  return { counts, totals: { rows: counts.now, lineBytes }, checks }
}

/**
 * The channel stage's bookkeeping and the feed_file rows that make the written files the channel's.
 * The files take their final keys before the commit that points at them; the files they replace go
 * after it, never before (a rollback keeps them the channel's).
 */
async function recordFiles(tx: Tx, storage: FeedStorage, plan: ExportPlan, files: ChannelFiles): Promise<void> {
  const replaced = await replaceFeedFileRows(tx.db, plan.site.account_id, plan.channel.id, files.records(), plan.now)
  await files.publish()
  // A removal that fails leaves files no row names: never served, and the export itself succeeded.
  tx.onCommit(() => storage.remove(replaced))
}
