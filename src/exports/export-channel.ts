import fs from 'node:fs/promises'
import path from 'node:path'
import { sql, type RawBuilder } from 'kysely'
import type pg from 'pg'
import { filterToSql, parseFilter } from '../catalog/filter.js'
import { withRawTransaction, type Db } from '../db/database.js'
import { jsonbObject } from '../db/json-object.js'
import type { Channel, ChannelFilename, ColumnMapping, Site } from '../db/schema.js'
import { AppError } from '../errors.js'
import { commitFeedFile, contentTypeOf, discardFeedFile, writeFeedFile, type FeedBudget, type WrittenFeed } from '../feeds/feed-writer.js'
import { RunFailure, SiteErrorCode } from '../sites/run-failure.js'
import { exportFailure, exportSettings } from './export-failures.js'
import { storageKeyOf, storagePath } from '../feeds/feed-storage.js'

/** Budgets of one export. */
export interface ExportLimits {
  /** The largest file an export writes (FEED_MAX_BYTES). */
  feedMaxBytes: number
}

export interface ExportCounts {
  now: number
  previous: number
  new: number
  modified: number
  unchanged: number
  deleted: number
}

export interface ExportedFile {
  filename: string
  path: string
  /** Where the file is kept (DATA_DIR/feeds); a push sends it from there after the run. */
  storageKey: string
  contentType: string
}

export interface ChannelExportResult {
  counts: ExportCounts
  files: ExportedFile[]
  /** Storage keys of the files this export replaced, to remove now that nothing points at them. */
  replacedKeys: string[]
}

/**
 * Exports one channel: the import stage through the channel's filter and mapping into the channel
 * stage and its files, with the delta against the previous export. One transaction: a failure keeps
 * the previous stage and files; files are written under keys of their own and only become the
 * channel's files when the transaction commits.
 */
export async function exportChannel(db: Db, dataDir: string, site: Site, channel: Channel, pid: string, now: Date, limits: ExportLimits): Promise<ChannelExportResult> {
  const stage = await db.selectFrom('site_stage').select('columns').where('site_id', '=', site.id).where('stage', '=', 'import').where('stage_id', '=', '0').executeTakeFirst()
  const stageColumns = stage?.columns ?? []
  const { mapping, files } = exportSettings(site, channel, stageColumns, now)
  const columns = mapping.map((m) => m.column)
  const budget: FeedBudget = {
    maxBytes: limits.feedMaxBytes,
    // On a connection of its own: the COPY's connection is busy sending the file.
    cancel: async (backendPid) => {
      await sql`SELECT pg_cancel_backend(${backendPid})`.execute(db)
    },
  }
  let condition: RawBuilder<unknown> = sql`true`
  if (channel.filter.trim() !== '') {
    try {
      condition = filterToSql(parseFilter(channel.filter, stageColumns), (column) => sql<string>`coalesce(data ->> ${column}, '')`)
    } catch (error) {
      if (!(error instanceof AppError)) throw error
      throw new RunFailure(SiteErrorCode.channelFilterInvalid, `Channel ${channel.id}: ${error.message}`, { channel_id: channel.id })
    }
  }
  const written: { entry: ChannelFilename; filename: string; feed: WrittenFeed; key: string }[] = []
  try {
    const result = await withRawTransaction(db, async (client, run) => {
      const ids = { site: integer(site.id), channel: integer(channel.id) }
      const ofChannel = `o.site_id = ${ids.site} AND o.stage = 'channel' AND o.stage_id = ${ids.channel}`
      const old = `stage_product o WHERE ${ofChannel}`
      const rows = sql`SELECT product_id, ${rowObject(mapping, stageColumns)} AS data FROM stage_product
        WHERE site_id = ${site.id} AND stage = 'import' AND stage_id = 0 AND ${condition}`
      const [previous] = await run<{ n: string }>(sql<{ n: string }>`SELECT count(*) AS n FROM stage_product o WHERE o.site_id = ${site.id} AND o.stage = 'channel' AND o.stage_id = ${channel.id}`.compile(db))
      // The rows of this export sit in a temporary table (neither logged nor indexed) while they are
      // compared with the previous export's. A first export has nothing to compare with: its rows go
      // straight into the channel stage, unless a delta file asks for them by kind.
      const filesOf = async (types: (ChannelFilename['type'] | 'all')[], from: pg.PoolClient = client, fullSql = `SELECT o.product_id, o.data FROM ${old}`) => {
        for (const { entry, filename } of files) {
          if (!types.includes(entry.type ?? 'all')) continue
          const key = storageKeyOf(channel.id, pid, filename)
          const finalPath = storagePath(dataDir, key)
          await fs.mkdir(path.dirname(finalPath), { recursive: true })
          const selectSql = entry.type === null ? fullSql : rowsOf(entry.type, old)
          const meta = { title: `${site.title}: ${channel.name}`, link: '', description: `Channel ${channel.id} of site ${site.id}` }
          const feed = await writeFeedFile(from, { selectSql, columns }, channel.format, finalPath, meta, budget).catch((error: unknown) => {
            throw exportFailure(error, channel, { filename })
          })
          written.push({ entry, filename, feed, key })
        }
      }
      const direct = Number(previous?.n ?? 0) === 0 && files.every(({ entry }) => entry.type === null)
      let counts: ExportCounts
      let filesWritten = false
      if (direct) {
        const insert = client.query(
          ...compiled(db, sql`INSERT INTO stage_product (site_id, stage, stage_id, product_id, account_id, data)
              SELECT ${site.id}, 'channel', ${channel.id}, r.product_id, ${site.account_id}, r.data FROM (${rows}) AS r`),
        )
        // The channel's rows are the import stage's as they are (no filter, identity mapping): the
        // files are written from the import stage on a second connection while the stage is filled,
        // instead of after it. The import stage cannot change meanwhile: one run per site at a time.
        const parallel = channel.filter.trim() === '' && isIdentity(mapping, stageColumns)
        const files = parallel
          ? withRawTransaction(db, (reader) => filesOf(['all'], reader, `SELECT product_id, data FROM stage_product WHERE site_id = ${ids.site} AND stage = 'import' AND stage_id = 0`))
          : Promise.resolve()
        const [inserted, written] = await Promise.allSettled([insert, files])
        if (inserted.status === 'rejected') throw inserted.reason
        if (written.status === 'rejected') throw written.reason
        filesWritten = parallel
        const now = inserted.value.rowCount ?? 0
        counts = { now, previous: 0, new: now, modified: 0, unchanged: 0, deleted: 0 }
      } else {
        // Each row is classified against the previous export as it is stored: one merge join of two
        // inputs in product order, instead of a join per question asked later.
        await client.query('CREATE TEMP TABLE export_rows (product_id text COLLATE "C" NOT NULL, data jsonb NOT NULL, kind text NOT NULL) ON COMMIT DROP')
        // Right after a bulk load the planner may believe the channel stage empty and pick a nested
        // loop that scans it once per row (minutes, measured). The joins of this export pair a large
        // side with the channel stage, where a hash join is always sound: no nested loops until the
        // stage is written.
        await client.query('SET LOCAL enable_nestloop = off')
        await run(
          sql`INSERT INTO export_rows (product_id, data, kind)
              SELECT r.product_id, r.data, CASE WHEN o.product_id IS NULL THEN 'new' WHEN o.data = r.data THEN 'unchanged' ELSE 'modified' END
              FROM (${rows}) AS r
              LEFT JOIN stage_product o ON o.site_id = ${site.id} AND o.stage = 'channel' AND o.stage_id = ${channel.id} AND o.product_id = r.product_id`.compile(db),
        )
        counts = await deltaCounts(client, Number(previous?.n ?? 0))
      }
      // Delta files need the previous rows, so they are written before the stage changes; full files
      // after, from the new stage in its index order (no sort).
      await filesOf(['new', 'modified', 'unchanged', 'deleted'])
      if (!direct) {
        await replaceStage(client, ofChannel, ids, integer(site.account_id), counts)
        await client.query('RESET enable_nestloop')
      }
      if (!filesWritten) await filesOf(['all'])
      const order = files.map(({ entry }) => entry)
      written.sort((a, b) => order.indexOf(a.entry) - order.indexOf(b.entry))
      await run(
        sql`INSERT INTO site_stage (site_id, stage, stage_id, account_id, columns, row_count, recipe)
            VALUES (${site.id}, 'channel', ${channel.id}, ${site.account_id}, ${columns}::text[], ${counts.now}, '')
            ON CONFLICT (site_id, stage, stage_id) DO UPDATE SET columns = excluded.columns, row_count = excluded.row_count, updated_at = now()`.compile(db),
      )
      const replaced = await run<{ storage_key: string }>(sql<{ storage_key: string }>`DELETE FROM feed_file WHERE channel_id = ${channel.id} RETURNING storage_key`.compile(db))
      for (const [position, file] of written.entries()) {
        await run(
          sql`INSERT INTO feed_file (account_id, channel_id, position, filename, storage_key, content_type, bytes, etag, written_at)
              VALUES (${site.account_id}, ${channel.id}, ${position}, ${file.filename}, ${file.key}, ${contentTypeOf(channel.format)}, ${file.feed.bytes}, ${file.feed.etag}, ${now})`.compile(db),
        )
      }
      // The files take their final names before the commit that points at them.
      for (const file of written) await commitFeedFile(file.feed, storagePath(dataDir, file.key))
      const keep = new Set(written.map((file) => file.key))
      return { counts, replacedKeys: replaced.map((row) => row.storage_key).filter((key) => !keep.has(key)) }
    })
    return {
      ...result,
      files: written.map((file) => ({ filename: file.filename, path: storagePath(dataDir, file.key), storageKey: file.key, contentType: contentTypeOf(channel.format) })),
    }
  } catch (error) {
    for (const file of written) {
      await discardFeedFile(file.feed)
      await fs.rm(storagePath(dataDir, file.key), { force: true })
    }
    // This export's directory, unless a file of it could not be removed.
    await fs.rmdir(path.dirname(storagePath(dataDir, storageKeyOf(channel.id, pid, '-')))).catch(() => {})
    throw exportFailure(error, channel)
  }
}

/** Counts of this export against the previous one, from the rows' kinds. */
async function deltaCounts(client: pg.PoolClient, previous: number): Promise<ExportCounts> {
  const { rows } = await client.query<{ kind: string; n: string }>('SELECT kind, count(*) AS n FROM export_rows GROUP BY kind')
  const of = (kind: string) => Number(rows.find((row) => row.kind === kind)?.n ?? 0)
  const counts = { previous, new: of('new'), modified: of('modified'), unchanged: of('unchanged') }
  return { ...counts, now: counts.new + counts.modified + counts.unchanged, deleted: previous - counts.modified - counts.unchanged }
}

/** The channel stage becomes this export's rows, writing only what changed. */
async function replaceStage(client: pg.PoolClient, ofChannel: string, ids: { site: string; channel: string }, accountId: string, counts: ExportCounts): Promise<void> {
  if (counts.deleted > 0) {
    await client.query(`DELETE FROM stage_product o WHERE ${ofChannel} AND NOT EXISTS (SELECT 1 FROM export_rows n WHERE n.product_id = o.product_id)`)
  }
  if (counts.modified > 0) {
    await client.query(`UPDATE stage_product o SET data = n.data FROM export_rows n WHERE n.kind = 'modified' AND ${ofChannel} AND o.product_id = n.product_id`)
  }
  if (counts.new > 0) {
    await client.query(`INSERT INTO stage_product (site_id, stage, stage_id, product_id, account_id, data)
      SELECT ${ids.site}, 'channel', ${ids.channel}, n.product_id, ${accountId}, n.data FROM export_rows n WHERE n.kind = 'new'`)
  }
}

/** The rows a delta file gets: one kind of change against the previous export. */
function rowsOf(type: NonNullable<ChannelFilename['type']>, old: string): string {
  if (type === 'deleted') return `SELECT o.product_id, o.data FROM ${old} AND NOT EXISTS (SELECT 1 FROM export_rows n WHERE n.product_id = o.product_id)`
  return `SELECT n.product_id, n.data FROM export_rows n WHERE n.kind = '${type}'`
}

/** A mapping that passes every stage column through, in stage order. */
function isIdentity(mapping: ColumnMapping[], stageColumns: string[]): boolean {
  return mapping.length === stageColumns.length && mapping.every((m, i) => 'source' in m && m.source === m.column && m.column === stageColumns[i])
}

/**
 * The mapped row as jsonb. A mapping that passes every stage column through unchanged keeps the row
 * as it is, which saves rebuilding every row's object (the larger part of an export's time).
 */
function rowObject(mapping: ColumnMapping[], stageColumns: string[]): RawBuilder<unknown> {
  if (isIdentity(mapping, stageColumns)) return sql`data`
  return jsonbObject(mapping.map((m) => [sql`${m.column}::text`, 'source' in m ? sql`coalesce(data ->> ${m.source}, '')` : sql`${m.value}::text`]))
}

/** A Kysely fragment as the text and values of a pg query (for a row count Kysely's run drops). */
function compiled(db: Db, fragment: RawBuilder<unknown>): [string, unknown[]] {
  const query = fragment.compile(db)
  return [query.sql, [...query.parameters]]
}

// Ids go into COPY statements, which take no parameters: only digits can pass.
function integer(id: string): string {
  if (!/^\d+$/.test(id)) throw new Error(`not an integer id: ${id}`)
  return id
}
