import type pg from 'pg'
import type { ChannelFilename } from '../db/schema.js'
import type { Tx } from '../db/transaction.js'
import { storageKeyOf, type FeedFileWriter, type FeedStorage } from '../feeds/feed-storage.js'
import { contentTypeOf, writeFeed } from '../feeds/feed-writer.js'
import { fileRowsSql } from './export-delta.js'
import { exportFailure } from './export-failures.js'
import type { ExportPlan } from './export-plan.js'
import type { FeedFileRecord } from './export-store.js'

/** A file an export wrote; a push sends it from the storage after the run. */
export interface ExportedFile {
  filename: string
  /** Its key in the feed storage. */
  storageKey: string
  contentType: string
}

type FileKind = NonNullable<ChannelFilename['type']> | 'all'

interface WrittenFile extends FeedFileRecord {
  entry: ChannelFilename
  writer: FeedFileWriter
}

/**
 * The files of one channel's export. Each is written under a key of this export's own and stays
 * invisible until it is published, just before the commit that makes it the channel's; a failed
 * export abandons every one it wrote, and the channel keeps its previous files.
 */
export class ChannelFiles {
  private readonly written: WrittenFile[] = []

  constructor(
    private readonly storage: FeedStorage,
    private readonly plan: ExportPlan,
  ) {}

  /**
   * Writes the plan's files of these kinds, one after the other, with COPY on `client`, which need
   * not be the transaction's own (a first export writes on a second connection while it fills the
   * stage). Full files read `fullSql`, by default the channel stage.
   */
  async write(tx: Tx, kinds: FileKind[], client: pg.PoolClient, fullSql = fileRowsSql(null, this.plan)): Promise<void> {
    const { site, channel, pid, columns, budget } = this.plan
    const meta = { title: `${site.title}: ${channel.name}`, link: '', description: `Channel ${channel.id} of site ${site.id}` }
    for (const { entry, filename } of this.plan.files) {
      if (!kinds.includes(entry.type ?? 'all')) continue
      const storageKey = storageKeyOf(channel.id, pid, filename)
      const selectSql = entry.type === null ? fullSql : fileRowsSql(entry.type, this.plan)
      try {
        // The export's transaction goes along: a storage that keeps files in the database writes them in it.
        const writer = await this.storage.create(storageKey, { tx })
        const content = await writeFeed(client, { selectSql, columns }, channel.format, meta, writer, budget)
        this.written.push({ entry, filename, storageKey, contentType: contentTypeOf(channel.format), writer, ...content })
      } catch (error) {
        throw exportFailure(error, channel, { filename })
      }
    }
  }

  /** The written files in the order of the channel's filenames (a first export may write them out of it). */
  records(): WrittenFile[] {
    const order = this.plan.files.map(({ entry }) => entry)
    return [...this.written].sort((a, b) => order.indexOf(a.entry) - order.indexOf(b.entry))
  }

  exported(): ExportedFile[] {
    return this.records().map(({ filename, storageKey, contentType }) => ({ filename, storageKey, contentType }))
  }

  /** Makes every written file visible at its key: before the commit that names them. */
  async publish(): Promise<void> {
    for (const file of this.records()) await file.writer.publish()
  }

  async abandon(): Promise<void> {
    for (const file of this.written) await file.writer.abandon()
  }
}
