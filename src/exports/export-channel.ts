import { isDeepStrictEqual } from 'node:util'
import type { Db } from '../db/database.js'
import type { Channel, ChannelHold, CheckTotals, Site } from '../db/schema.js'
import { inTransaction, type Tx } from '../db/transaction.js'
import { recordActivity } from '../activity/activity-store.js'
import type { FeedStorage } from '../feeds/feed-storage.js'
import { writeAfterExport } from '../feeds/feed-materialiser.js'
import {
  classifyAll,
  classifyChanged,
  deltaCounts,
  firstExportCounts,
  replaceStage,
  stageLineBytes,
  storeFirstExport,
  type ExportCounts,
  type StageChanges,
  type StageTotals,
} from './export-delta.js'
import { countChecks, NO_CHECKS } from './check-totals.js'
import { exportFailure } from './export-failures.js'
import { ChannelFiles, type ExportedFile } from './export-files.js'
import { planExport, type ExportLimits, type ExportPlan } from './export-plan.js'
import {
  channelStageState,
  importStageOf,
  lockChannelExport,
  replaceFeedFileRows,
  saveChannelStage,
  setChannelHold,
  type ChannelStageState,
  type ImportStage,
} from './export-store.js'
import { checkRelease } from './release-check.js'
import { safetyStop } from './safety-stop.js'

export type { ExportCounts } from './export-delta.js'
export type { ExportedFile } from './export-files.js'
export type { ExportLimits } from './export-plan.js'

export interface ChannelExportResult {
  counts: ExportCounts
  files: ExportedFile[]
  /** What checking the rows against the channel's template found, after this export and before it (none before the first). */
  checks: CheckTotals
  previousChecks: CheckTotals | undefined
  /** The hold a safety stop put on this export: then nothing was written, and the counts say what it would have published. */
  held?: ChannelHold
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
  /**
   * Publishes this held export as it was computed (its pid and start are the request's), without
   * the safety stops, if what it was made from is unchanged; a ConflictError otherwise.
   */
  release?: ChannelHold
}

/**
 * Exports one channel: the import stage through the channel's filter and mapping into the channel
 * stage and its files, with the delta against the previous export. One transaction: a failure keeps
 * the previous stage and files; files are written under keys of their own and only become the
 * channel's files when the transaction commits, after which the files they replaced are removed.
 * An export a safety stop holds is rolled back whole: it returns what it would have published.
 */
export async function exportChannel(db: Db, request: ExportChannelRequest): Promise<ChannelExportResult> {
  const { storage, site, channel, pid, now, limits, onHookError, release } = request
  const plan = await planExport(db, { site, channel, pid, now, limits })
  const files = new ChannelFiles(storage, plan)
  try {
    return await inTransaction(
      db,
      async (tx) => {
        // Exports of one channel take turns (a release beside a run), and no import builds meanwhile.
        await lockChannelExport(tx.db, site, channel.id)
        const previous = await channelStageState(tx.db, site.id, channel.id)
        const importStage = await importStageOf(tx.db, site.id)
        if (release) await checkRelease(tx.db, { channel, release, importStage, signature: plan.signature })
        // A first export has nothing to compare with, unless a delta file asks for its rows by kind.
        const first = (previous?.checks?.checked ?? previous?.rows ?? 0) === 0 && plan.files.every(({ entry }) => entry.type === null)
        // A first export whose rows are the import stage's writes its full file beside the stage's rows.
        const beside = first && plan.importRows ? files.writeFullBeside(db) : undefined
        const [computed, writtenBeside] = await bothSettled(first ? firstExport(tx, plan) : compareExport(tx, plan, previous, importStage), beside)
        const previousChecks = previous?.checks ?? undefined
        // Before anything was delivered (no stage yet) there is no drop to measure.
        const delivered = previous === undefined ? null : previous.rows
        const hold = release ? undefined : safetyStop(channel, figuresOf(computed, delivered))
        if (hold) {
          tx.rollbackOnly()
          await files.abandon()
          const held: ChannelHold = {
            ...hold,
            pid,
            export_start: now.toISOString(),
            held_at: new Date().toISOString(),
            products: computed.counts.now,
            products_previous: delivered,
            products_checked: computed.checks.checked,
            products_left_out: computed.checks.leftOut,
            build: importStage?.build ?? '0',
            signature: plan.signature,
          }
          return { counts: computed.counts, files: [], checks: computed.checks, previousChecks, held }
        }
        if (!first) await writeLaterExport(tx, plan, files, computed)
        const { counts, checks } = computed
        const lineBytes = writtenBeside ?? (await fullFiles(tx, { plan, files, previous, computed }))
        const totals = { rows: first ? computed.totals.rows : counts.now, lineBytes }
        await saveChannelStage(tx.db, plan.site, plan.channel.id, {
          columns: plan.columns,
          ...totals,
          build: importStage?.build ?? '0',
          signature: plan.signature,
          checks: { ...checks, template: plan.template.name },
          referral: plan.referral,
          linesOnRead: plan.linesOnRead,
          format: plan.channel.format,
        })
        await recordFiles(db, tx, { storage, plan, files, onHookError })
        // A published export ends any hold: the next export compares against it.
        if (channel.hold !== null || release) await setChannelHold(tx.db, channel, null)
        if (release) await recordRelease(tx, channel, release, counts.now)
        return { counts, files: files.exported(), checks, previousChecks }
      },
      { onHookError },
    )
  } catch (error) {
    await files.abandon()
    throw exportFailure(error, channel)
  }
}

/** Both results, once both have settled: neither is left running when the other fails. */
async function bothSettled<A, B>(a: Promise<A>, b: Promise<B> | undefined): Promise<[A, B | undefined]> {
  const [first, second] = await Promise.allSettled([a, b])
  if (first.status === 'rejected') throw first.reason
  if (second.status === 'rejected') throw second.reason
  return [first.value, second.value]
}

/** A held export published by a person: the activity log says who, with the products it published. */
function recordRelease(tx: Tx, channel: Channel, release: ChannelHold, products: number): Promise<void> {
  return recordActivity(tx.db, {
    accountId: channel.account_id,
    action: 'export.released',
    target: { type: 'channel', id: channel.id, siteId: channel.site_id },
    changes: { hold: [{ pid: release.pid, reason: release.reason }, null], products_published: [null, products] },
  })
}

/** What an export computed before it writes: its counts and checks, and what writing it takes. */
interface Computed {
  counts: ExportCounts
  checks: CheckTotals
  /** A first export: what it stored. A later one: none (its stage is written after the safety stops). */
  totals: StageTotals
  later?: { sameMaking: boolean; classified: boolean; stage: StageChanges; lineBytesChange: number }
}

function figuresOf({ counts, checks }: Computed, productsPrevious: number | null) {
  return { products: counts.now, productsPrevious, checked: checks.checked, leftOut: checks.leftOut }
}

/** The rows and their lines go straight into the channel stage. */
async function firstExport(tx: Tx, plan: ExportPlan): Promise<Computed> {
  const { checks, ...totals } = await storeFirstExport(tx, plan)
  return { counts: firstExportCounts(totals.rows), totals, checks }
}

/**
 * The rows the import changed since the stage's build are classified when the stage was made the
 * way this export makes it and stage_change still holds every change since; otherwise every row.
 * Counted from export_rows: nothing is written yet.
 */
async function compareExport(tx: Tx, plan: ExportPlan, previous: ChannelStageState | undefined, importStage: ImportStage | undefined): Promise<Computed> {
  const sameMaking = previous !== undefined && previous.signature === plan.signature
  const incremental = sameMaking && importStage !== undefined && BigInt(previous.build) >= BigInt(importStage.changesFrom)
  const classified = incremental && (await classifyChanged(tx, plan, previous.build, previous.rows))
  const previousOnRead = (previous?.linesOnRead ?? null) !== null
  // Lines laid out as before (the same format and columns) are compared as lines: a row whose data
  // is the same may be written another way (a rewrite in another currency), and one whose data
  // changed may be written the same (a value sent empty where it was missing).
  const sameLayout = previous !== undefined && previous.format === plan.channel.format && isDeepStrictEqual(previous.columns, plan.columns)
  const previousColumns = previous?.columns ?? plan.columns
  if (!classified) await classifyAll(tx, plan, { renderAll: !sameMaking, previousReferral: previous?.referral, previousOnRead, sameLayout, previousColumns })
  const { lineBytesChange, stage, ...counts } = await deltaCounts(tx, previous?.rows ?? 0)
  // Counted from the changes when the previous counts were made the same way, else from every row.
  const checks = plan.checks
    ? await countChecks(tx, plan.checks, sameMaking ? (previous.checks ?? undefined) : undefined)
    : { ...NO_CHECKS, codes: {}, checked: counts.now, exported: counts.now }
  return { counts, checks, totals: { rows: counts.now, lineBytes: 0 }, later: { sameMaking, classified, stage, lineBytesChange } }
}

/** Delta files need export_rows and the previous rows, so they are written before the stage changes. */
async function writeLaterExport(tx: Tx, plan: ExportPlan, files: ChannelFiles, computed: Computed): Promise<void> {
  const later = computed.later
  if (!later) return
  await files.writeDeltas(tx, ['new', 'modified', 'deleted'])
  await replaceStage(tx, plan, later.stage, { rewrite: !later.sameMaking, fewRows: later.classified })
  await files.writeDeltas(tx, ['unchanged', 'skipped'])
}

/**
 * The full files of the export, once its stage is written; returns the bytes of its lines. A stage
 * of lines rendered on read made whole (a first export, or one made another way) writes them now,
 * at the speed of COPY, and measures them as it goes; otherwise the files are recorded, their size
 * from the lines stored, or from the previous size and what changed, and written after the commit
 * (or on the first download, whichever comes first).
 */
interface Exported {
  plan: ExportPlan
  files: ChannelFiles
  previous: ChannelStageState | undefined
  computed: Computed
}

async function fullFiles(tx: Tx, exported: Exported): Promise<number> {
  const { plan, files, computed } = exported
  if (plan.linesOnRead && !computed.later?.sameMaking) return files.writeFull(tx)
  const lineBytes = await recordedLineBytes(tx, exported)
  files.recordFull(lineBytes)
  return lineBytes
}

/** The bytes of the stage's lines: a first export's, the previous ones' with what changed, or read whole (after a stage made another way). */
async function recordedLineBytes(tx: Tx, { plan, previous, computed }: Exported): Promise<number> {
  const later = computed.later
  if (later === undefined) return computed.totals.lineBytes
  return later.sameMaking && previous ? previous.lineBytes + later.lineBytesChange : stageLineBytes(tx, plan)
}

/**
 * The channel stage's bookkeeping and the feed_file rows that make the written files the channel's.
 * The files take their final keys before the commit that points at them; the files they replace go
 * after it, never before (a rollback keeps them the channel's).
 */
interface Recording {
  storage: FeedStorage
  plan: ExportPlan
  files: ChannelFiles
  onHookError?: (error: unknown) => void
}

async function recordFiles(db: Db, tx: Tx, { storage, plan, files, onHookError = () => {} }: Recording): Promise<void> {
  const records = files.records()
  const replaced = await replaceFeedFileRows(tx.db, plan.site.account_id, plan.channel.id, records, plan.now)
  await files.publish()
  // A removal that fails leaves files no row names: never served, and the export itself succeeded.
  tx.onCommit(() => storage.remove(replaced))
  const recorded = records.filter((file) => file.full?.pending).map((file) => ({ accountId: plan.site.account_id, storageKey: file.storageKey }))
  tx.onCommit(() => writeAfterExport(db, storage, recorded, onHookError))
}
