import { createHash } from 'node:crypto'
import type { ChannelFilename } from '../db/schema.js'
import type { Tx } from '../db/transaction.js'
import { storageKeyOf, type FeedFileWriter, type FeedStorage } from '../feeds/feed-storage.js'
import type pg from 'pg'
import { poolOf, type Db } from '../db/database.js'
import { renderedLinesPlan, type RenderedRows } from '../feeds/feed-sql.js'
import { quoter } from '../feeds/sql-quoter.js'
import { contentTypeOf, FeedTooLargeError, writeFeedPlan } from '../feeds/feed-writer.js'
import { deltaFilePlan } from './export-delta.js'
import { exportFailure } from './export-failures.js'
import type { ExportPlan } from './export-plan.js'
import { skippedFrame } from './skipped-file.js'
import type { FeedFileRecord } from './export-store.js'

/** A file an export wrote; a push sends it from the storage after the run. */
export interface ExportedFile {
  filename: string
  /** Its key in the feed storage. */
  storageKey: string
  contentType: string
}

type DeltaKind = NonNullable<ChannelFilename['type']>

/** A file measured and dropped. */
const DISCARDED: FeedFileWriter = { write: async () => {}, close: async () => {}, publish: async () => {}, abandon: async () => {} }

interface ChannelFile extends FeedFileRecord {
  entry: ChannelFilename
  /** The writer of a file written now (a delta file); none for a full file, written on its first download. */
  writer?: FeedFileWriter
}

/**
 * The files of one channel's export. A delta file is written now, under a key of this export's
 * own, and stays invisible until it is published, just before the commit that makes it the
 * channel's; a failed export abandons every one it wrote, and the channel keeps its previous files.
 * A full file is only recorded: its size is known from the stage's lines, and it is written from
 * them on its first download (feed-materialiser.ts), so an export costs what changed.
 */
export class ChannelFiles {
  private readonly files: ChannelFile[] = []

  constructor(
    private readonly storage: FeedStorage,
    private readonly plan: ExportPlan,
  ) {}

  /** Writes the plan's delta files of these kinds from export_rows (or, unchanged and skipped ones, the stage), with COPY on the transaction's client. */
  async writeDeltas(tx: Tx, kinds: DeltaKind[]): Promise<void> {
    const { channel, pid, budget } = this.plan
    for (const { entry, filename } of this.plan.files) {
      if (entry.type === null || !kinds.includes(entry.type)) continue
      const frame = entry.type === 'skipped' ? skippedFrame(this.plan) : this.plan.frame
      const storageKey = storageKeyOf(channel.id, pid, filename)
      try {
        // The export's transaction goes along: a storage that keeps files in the database writes them in it.
        const writer = await this.storage.create(storageKey, { tx, accountId: this.plan.site.account_id })
        const content = await writeFeedPlan(tx.client, deltaFilePlan(entry.type, this.plan, frame), writer, budget)
        this.files.push({ entry, filename, storageKey, contentType: contentTypeOf(channel.format), writer, ...content })
      } catch (error) {
        throw exportFailure(error, channel, { filename })
      }
    }
  }

  /**
   * Records the plan's full files, to be written from the channel stage's lines (`lineBytes` of
   * them) when first asked for. Each export gets its own ETag, so a client's cached copy of the
   * previous export is never taken for this one. Throws when a file would pass FEED_MAX_BYTES.
   */
  recordFull(lineBytes: number): void {
    const { channel, budget, frame } = this.plan
    const bytes = Buffer.byteLength(frame.header) + lineBytes + Buffer.byteLength(frame.footer)
    for (const { entry, filename } of this.plan.files) {
      if (entry.type !== null) continue
      if (bytes > budget.maxBytes) throw exportFailure(new FeedTooLargeError(budget.maxBytes), channel, { filename })
      this.files.push(this.fullFile(entry, filename, bytes, true))
    }
  }

  /**
   * Writes the plan's full files now, from the channel stage's rows as this export left them, each
   * line rendered by COPY's CSV writer as it is read (a stage of lines rendered on read, whose
   * size is known only once they are). Returns the bytes of the lines, a newline each.
   */
  writeFull(tx: Tx): Promise<number> {
    return this.writeRendered(tx.client, this.plan.stageData, tx)
  }

  /**
   * writeFull from the import stage's rows (ExportPlan.importRows) on a connection of its own, while
   * the export's transaction writes the stage's rows: the two take about as long, and each a core.
   * The export holds the import stage (lockChannelExport), so both read the same rows.
   */
  async writeFullBeside(db: Db): Promise<number> {
    const rows = this.plan.importRows
    if (!rows) throw new Error("only a channel whose rows are the import stage's through its mapping is written beside its stage")
    const client = await poolOf(db).connect()
    try {
      return await this.writeRendered(client, rows)
    } finally {
      client.release()
    }
  }

  private async writeRendered(client: pg.PoolClient, rows: Pick<RenderedRows, 'rowsSql' | 'valueSql'>, tx?: Tx): Promise<number> {
    const { site, channel, budget, frame, linesOnRead, columns } = this.plan
    if (!linesOnRead) throw new Error('only the lines of a stage that renders them on read are written by its export')
    const plan = renderedLinesPlan(quoter, { ...rows, columns, format: linesOnRead }, frame)
    const frameBytes = Buffer.byteLength(frame.header) + Buffer.byteLength(frame.footer)
    const full = this.plan.files.filter(({ entry }) => entry.type === null)
    // Without a full file, the lines are still measured: a later export's file adds its changes to them.
    if (full.length === 0) return (await writeFeedPlan(client, plan, DISCARDED, budget, { etag: false })).bytes - frameBytes
    let bytes = frameBytes
    for (const { entry, filename } of full) {
      const file = this.fullFile(entry, filename, 0, false)
      try {
        file.writer = await this.storage.create(file.storageKey, { tx, accountId: site.account_id })
        this.files.push(file)
        file.bytes = bytes = (await writeFeedPlan(client, plan, file.writer, budget, { etag: false })).bytes
      } catch (error) {
        throw exportFailure(error, channel, { filename })
      }
    }
    return bytes - frameBytes
  }

  private fullFile(entry: ChannelFilename, filename: string, bytes: number, pending: boolean): ChannelFile {
    const { site, channel, pid, frame } = this.plan
    const storageKey = storageKeyOf(channel.id, pid, filename)
    const etag = `"${createHash('sha256').update(`${site.id}/${storageKey}`).digest('hex').slice(0, 32)}"`
    return { entry, filename, storageKey, contentType: contentTypeOf(channel.format), bytes, etag, full: { siteId: site.id, ...frame, pending } }
  }

  /** The written files in the order of the channel's filenames (a first export may write them out of it). */
  records(): ChannelFile[] {
    const order = this.plan.files.map(({ entry }) => entry)
    return [...this.files].sort((a, b) => order.indexOf(a.entry) - order.indexOf(b.entry))
  }

  exported(): ExportedFile[] {
    return this.records().map(({ filename, storageKey, contentType }) => ({ filename, storageKey, contentType }))
  }

  /** Makes every delta file visible at its key: before the commit that names them. */
  async publish(): Promise<void> {
    for (const file of this.records()) await file.writer?.publish()
  }

  async abandon(): Promise<void> {
    for (const file of this.files) await file.writer?.abandon()
  }
}
