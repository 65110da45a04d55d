import fs from 'node:fs/promises'
import path from 'node:path'
import { sql, type RawBuilder } from 'kysely'
import { filterToSql, parseFilter } from '../catalog/filter.js'
import { withRawTransaction, type Db } from '../db/database.js'
import type { Channel, ChannelFilename, ColumnMapping, Site } from '../db/schema.js'
import { AppError } from '../errors.js'
import { commitFeedFile, contentTypeOf, discardFeedFile, writeFeedFile, type WrittenFeed } from '../feeds/feed-writer.js'
import { RunFailure, SiteErrorCode } from '../jobs/run-failure.js'
import { storageKeyOf, storagePath } from './feed-storage.js'

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
  contentType: string
}

export interface ChannelExportResult {
  counts: ExportCounts
  files: ExportedFile[]
  /** Storage keys of the files this export replaced, to remove now that nothing points at them. */
  replacedKeys: string[]
}

// jsonb_build_object takes at most 100 arguments: wider mappings are built in slices and joined.
const PAIRS_PER_CALL = 50

/**
 * Exports one channel: the import stage through the channel's filter and mapping into the channel
 * stage and its files, with the delta against the previous export. One transaction: a failure keeps
 * the previous stage and files; files are written under keys of their own and only become the
 * channel's files when the transaction commits.
 */
export async function exportChannel(db: Db, dataDir: string, site: Site, channel: Channel, pid: string, now: Date): Promise<ChannelExportResult> {
  const stage = await db.selectFrom('site_stage').select('columns').where('site_id', '=', site.id).where('stage', '=', 'import').where('stage_id', '=', '0').executeTakeFirst()
  const stageColumns = stage?.columns ?? []
  const mapping: ColumnMapping[] = channel.mapping.length > 0 ? channel.mapping : stageColumns.map((column) => ({ column, source: column }))
  const columns = mapping.map((m) => m.column)
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
      await client.query('CREATE TEMP TABLE export_rows (product_id text COLLATE "C" PRIMARY KEY, data jsonb NOT NULL) ON COMMIT DROP')
      await run(
        sql`INSERT INTO export_rows (product_id, data)
            SELECT product_id, ${rowObject(mapping)} FROM stage_product
            WHERE site_id = ${site.id} AND stage = 'import' AND stage_id = 0 AND ${condition}`.compile(db),
      )
      const ids = { site: integer(site.id), channel: integer(channel.id) }
      const old = `stage_product o WHERE o.site_id = ${ids.site} AND o.stage = 'channel' AND o.stage_id = ${ids.channel}`
      const [delta] = await run<{ now: string; fresh: string; modified: string; unchanged: string; previous: string }>(
        sql<{ now: string; fresh: string; modified: string; unchanged: string; previous: string }>`
          SELECT count(*) AS now,
                 count(*) FILTER (WHERE o.product_id IS NULL) AS fresh,
                 count(*) FILTER (WHERE o.product_id IS NOT NULL AND o.data <> n.data) AS modified,
                 count(*) FILTER (WHERE o.product_id IS NOT NULL AND o.data = n.data) AS unchanged,
                 (SELECT count(*) FROM ${sql.raw(old)}) AS previous
          FROM export_rows n
          LEFT JOIN stage_product o ON o.site_id = ${site.id} AND o.stage = 'channel' AND o.stage_id = ${channel.id} AND o.product_id = n.product_id`.compile(db),
      )
      const counts: ExportCounts = {
        now: Number(delta?.now ?? 0),
        previous: Number(delta?.previous ?? 0),
        new: Number(delta?.fresh ?? 0),
        modified: Number(delta?.modified ?? 0),
        unchanged: Number(delta?.unchanged ?? 0),
        deleted: 0,
      }
      counts.deleted = counts.previous - counts.modified - counts.unchanged

      for (const entry of channel.filenames) {
        const filename = resolveFilename(entry.filename, site.id, channel.id, now)
        const key = storageKeyOf(channel.id, pid, filename)
        const finalPath = storagePath(dataDir, key)
        await fs.mkdir(path.dirname(finalPath), { recursive: true })
        const feed = await writeFeedFile(client, { selectSql: rowsOf(entry.type, old), columns }, channel.format, finalPath, {
          title: `${site.title}: ${channel.name}`,
          link: '',
          description: `Channel ${channel.id} of site ${site.id}`,
        })
        written.push({ entry, filename, feed, key })
      }

      await client.query(`DELETE FROM stage_product o WHERE o.site_id = ${ids.site} AND o.stage = 'channel' AND o.stage_id = ${ids.channel}`)
      await client.query(`INSERT INTO stage_product (site_id, stage, stage_id, product_id, account_id, data)
        SELECT ${ids.site}, 'channel', ${ids.channel}, product_id, ${integer(site.account_id)}, data FROM export_rows`)
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
      files: written.map((file) => ({ filename: file.filename, path: storagePath(dataDir, file.key), contentType: contentTypeOf(channel.format) })),
    }
  } catch (error) {
    for (const file of written) {
      await discardFeedFile(file.feed)
      await fs.rm(storagePath(dataDir, file.key), { force: true })
    }
    throw error
  }
}

/** The rows a file gets: all of them, or one kind of change against the previous export. */
function rowsOf(type: ChannelFilename['type'], old: string): string {
  switch (type) {
    case null:
      return 'SELECT product_id, data FROM export_rows'
    case 'new':
      return `SELECT n.product_id, n.data FROM export_rows n WHERE NOT EXISTS (SELECT 1 FROM ${old} AND o.product_id = n.product_id)`
    case 'modified':
      return `SELECT n.product_id, n.data FROM export_rows n WHERE EXISTS (SELECT 1 FROM ${old} AND o.product_id = n.product_id AND o.data <> n.data)`
    case 'unchanged':
      return `SELECT n.product_id, n.data FROM export_rows n WHERE EXISTS (SELECT 1 FROM ${old} AND o.product_id = n.product_id AND o.data = n.data)`
    case 'deleted':
      return `SELECT o.product_id, o.data FROM ${old} AND NOT EXISTS (SELECT 1 FROM export_rows n WHERE n.product_id = o.product_id)`
  }
}

/** The mapped row as jsonb; empty values are left out (a read shows them as ''). */
function rowObject(mapping: ColumnMapping[]): RawBuilder<unknown> {
  if (mapping.length === 0) return sql`'{}'::jsonb`
  const slices: RawBuilder<unknown>[] = []
  for (let i = 0; i < mapping.length; i += PAIRS_PER_CALL) {
    const pairs = mapping.slice(i, i + PAIRS_PER_CALL).map((m) => ('source' in m ? sql`${m.column}::text, nullif(data ->> ${m.source}, '')` : sql`${m.column}::text, nullif(${m.value}::text, '')`))
    slices.push(sql`jsonb_strip_nulls(jsonb_build_object(${sql.join(pairs)}))`)
  }
  return sql.join(slices, sql` || `)
}

function resolveFilename(template: string, siteId: string, channelId: string, now: Date): string {
  return template.replaceAll('{site_id}', siteId).replaceAll('{channel_id}', channelId).replaceAll('{date}', now.toISOString().slice(0, 10))
}

// Ids go into COPY statements, which take no parameters: only digits can pass.
function integer(id: string): string {
  if (!/^\d+$/.test(id)) throw new Error(`not an integer id: ${id}`)
  return id
}
