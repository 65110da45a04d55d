import { SlotsFullError, type ConnectionSlots } from '../db/connection-slots.js'
import type { Db } from '../db/database.js'
import { inTransaction, type Tx } from '../db/transaction.js'
import { TooManyReadsError } from '../errors.js'
import type { FeedStorage } from './feed-storage.js'
import { channelStageData, channelStageRows, linesPlan, renderedLinesPlan, type FeedPlan, type RenderedFormat } from './feed-sql.js'
import { quoter } from './sql-quoter.js'
import { CHANNEL_STAGES } from '../db/stage-keys.js'
import { referralOf } from '../db/referred-data.js'
import type { ColumnMapping } from '../db/schema.js'
import { cancellingBudget, writeFeedPlan, type FeedBudget } from './feed-writer.js'

// A full feed file is not written by the export that makes it: the export records it (size, ETag,
// the text around its lines) and keeps every row's rendered line in the channel stage, so that a
// small change costs a small export. The file is written here, once, on its first download or push
// after the export: a sequential read of the stage's lines in key order into the storage, which
// also stores its gzip representation as it goes.

/** The row of a full file, as the materialiser needs it. */
export interface RecordedFeedFile {
  accountId: string
  storageKey: string
}

/**
 * What a writing waits for before it starts: writing a file holds a database connection for as
 * long as it takes, so the feed route takes one of the account's read slots for it (a tenant's
 * first downloads cannot take every connection).
 */
export type MaterialiseGate = (accountId: string, work: () => Promise<void>) => Promise<void>

/**
 * A gate through `slots` (the read slots) that takes one file of an account at a time: a consumer
 * fetching all of an account's feeds at once waits its turn instead of being refused for the
 * account's read cap. Waiting for a slot ends after `waitMs` with a 429.
 */
export function accountQueueGate(slots: ConnectionSlots, waitMs: number): MaterialiseGate {
  const queues = new Map<string, Promise<void>>()
  return (accountId, work) => {
    const turn = (queues.get(accountId) ?? Promise.resolve()).then(() =>
      slots.run(accountId, AbortSignal.timeout(waitMs), work).catch((error: unknown) => {
        // The account's product reads hold its whole share: refused as a product read would be.
        throw error instanceof SlotsFullError ? new TooManyReadsError(error.inFlight) : error
      }),
    )
    const settled = turn.catch(() => {})
    queues.set(accountId, settled)
    void settled.then(() => {
      if (queues.get(accountId) === settled) queues.delete(accountId)
    })
    return turn
  }
}

// One writing per file at a time in this process: concurrent first downloads wait for the same
// one. (Two processes may both write a file; the storage's atomic publish keeps either whole.)
const writing = new WeakMap<FeedStorage, Map<string, Promise<void>>>()

/**
 * Writes the full file `file` names from its channel stage, unless it is written already. The row
 * and the stage are read in one snapshot, so the file holds exactly the rows of the export that
 * recorded it, even when the next export commits meanwhile; a file whose row such an export
 * replaced is removed again (its reader already has it open). `rewrite`: write it although its row
 * says it is written (the storage lost it).
 */
export function materialiseFeedFile(db: Db, storage: FeedStorage, file: RecordedFeedFile, gate?: MaterialiseGate, { rewrite = false } = {}): Promise<void> {
  let files = writing.get(storage)
  if (!files) writing.set(storage, (files = new Map()))
  const running = files.get(file.storageKey)
  if (running) return running
  const work = () => materialise(db, storage, file, rewrite)
  const started = (gate ? gate(file.accountId, work) : work()).finally(() => files.delete(file.storageKey))
  files.set(file.storageKey, started)
  return started
}

// The files this process writes after the exports that recorded them, one at a time: each holds a
// connection for as long as its COPY takes.
const afterExports = new WeakMap<FeedStorage, Promise<void>>()

/**
 * Writes `files` (full files an export recorded) once the current writes are done, without
 * waiting: neither the run nor a first download waits for them (a first download meanwhile is
 * served from the lines). Should this process stop first, the file stays recorded as not written:
 * its first download writes it, or the cleanup (writeRecordedFiles).
 */
export function writeAfterExport(db: Db, storage: FeedStorage, files: RecordedFeedFile[], onError: (error: unknown) => void): void {
  if (files.length === 0) return
  const before = afterExports.get(storage) ?? Promise.resolve()
  const done = before.then(async () => {
    for (const file of files) await materialiseFeedFile(db, storage, file).catch(onError)
  })
  afterExports.set(storage, done)
  void done.then(() => {
    if (afterExports.get(storage) === done) afterExports.delete(storage)
  })
}

/**
 * Writes the full files recorded before `before` and still not written: those of a process that
 * stopped before it wrote them after their export, and never downloaded since. Returns how many.
 */
export async function writeRecordedFiles(db: Db, storage: FeedStorage, { before, limit = 100 }: { before: Date; limit?: number }): Promise<number> {
  const files = await db
    .selectFrom('feed_file')
    .select(['account_id', 'storage_key'])
    .where('pending', '=', true)
    .where('written_at', '<', before)
    .orderBy('written_at')
    .limit(limit)
    .execute()
  let written = 0
  for (const file of files) {
    // One file that cannot be written now keeps neither the others nor the rest of the cleanup waiting: the next cleanup tries it again.
    const wrote = await materialiseFeedFile(db, storage, { accountId: file.account_id, storageKey: file.storage_key }).then(
      () => true,
      () => false,
    )
    if (wrote) written++
  }
  return written
}

async function materialise(db: Db, storage: FeedStorage, file: RecordedFeedFile, rewrite: boolean): Promise<void> {
  const wrote = await inTransaction(
    db,
    async (tx) => {
      const row = await unwrittenFile(tx, file, { rewrite })
      if (!row) return false
      const writer = await storage.create(file.storageKey, { tx, accountId: file.accountId })
      await writeFeedPlan(tx.client, linesOfFile(row), writer, fileBudget(db, row), { etag: false })
      await writer.publish()
      return true
    },
    { isolation: 'repeatable read' },
  )
  if (!wrote) return
  const current = await db
    .updateTable('feed_file')
    .set({ pending: false })
    .where('account_id', '=', file.accountId)
    .where('storage_key', '=', file.storageKey)
    .returning('id')
    .executeTakeFirst()
  // A newer export replaced the row while the file was written: nothing names it any more.
  if (!current) await storage.remove([file.storageKey])
}

/** What a full file is written from: its row, as the export recorded it, and how its channel stage keeps its lines. */
export interface UnwrittenFile {
  channel_id: string
  site_id: string
  bytes: string
  header: string
  footer: string
  /** The stage's lines are rendered when read, in this format, from its rows' data (see ExportPlan.linesOnRead). */
  line_format: RenderedFormat | null
  columns: string[] | null
  refers_to_import: boolean | null
  refers_mapping: ColumnMapping[] | null
}

/**
 * The row of `file` when its file is still to be written (`rewrite`: also when its row says it is
 * written, the storage having lost it). Read in the caller's repeatable-read snapshot, the row and
 * the lines that follow are one export's. A delta file cannot be written again.
 */
export async function unwrittenFile(tx: Tx, file: RecordedFeedFile, { rewrite = false } = {}): Promise<UnwrittenFile | undefined> {
  const row = await tx.db
    .selectFrom('feed_file as f')
    .leftJoin('site_stage as st', (join) =>
      join.onRef('st.site_id', '=', 'f.site_id').on('st.stage', '=', CHANNEL_STAGES).onRef('st.stage_id', '=', 'f.channel_id'),
    )
    .select([
      'f.channel_id',
      'f.site_id',
      'f.pending',
      'f.bytes',
      'f.header',
      'f.footer',
      'st.line_format',
      'st.columns',
      'st.refers_to_import',
      'st.refers_mapping',
    ])
    .where('f.account_id', '=', file.accountId)
    .where('f.storage_key', '=', file.storageKey)
    .executeTakeFirst()
  if (!row || (!row.pending && !rewrite) || row.site_id === null) return undefined
  return { ...row, site_id: row.site_id }
}

/** The file's COPY: its channel stage's lines in key order, between the header and footer its export recorded. */
export function linesOfFile(row: UnwrittenFile): FeedPlan {
  const frame = { header: row.header, footer: row.footer }
  if (row.line_format) {
    const referral = referralOf({ refers_to_import: row.refers_to_import ?? false, refers_mapping: row.refers_mapping })
    return renderedLinesPlan(quoter, { ...channelStageData(row.site_id, row.channel_id, referral), columns: row.columns ?? [], format: row.line_format }, frame)
  }
  return linesPlan(`SELECT o.product_id, o.line FROM ${channelStageRows(row.site_id, row.channel_id)} AND o.line IS NOT NULL`, frame)
}

/** The export measured the file; one far larger would be a bug, not written whole. */
export function fileBudget(db: Db, row: UnwrittenFile): FeedBudget {
  return cancellingBudget(db, 2 * Number(row.bytes) + 1024 * 1024)
}
