import { sql, type RawBuilder } from 'kysely'
import { filterToSql, parseFilter } from '../catalog/filter.js'
import type { Db } from '../db/database.js'
import { jsonbObject } from '../db/json-object.js'
import type { Channel, ChannelFilename, ColumnMapping, Site } from '../db/schema.js'
import { AppError } from '../errors.js'
import type { FeedBudget } from '../feeds/feed-writer.js'
import { RunFailure, SiteErrorCode } from '../sites/run-failure.js'
import { exportSettings } from './export-failures.js'
import { importStageColumns } from './export-store.js'

// The first step of a channel's export, before its transaction: the channel's settings and filter
// checked and turned into the SQL every later step uses.

/** Budgets of one export. */
export interface ExportLimits {
  /** The largest file an export writes (FEED_MAX_BYTES). */
  feedMaxBytes: number
}

/** One channel's export, as its steps see it. */
export interface ExportPlan {
  site: Site
  channel: Channel
  pid: string
  now: Date
  /** The output columns, in order. */
  columns: string[]
  /** Each filename template with its name for this export. */
  files: { entry: ChannelFilename; filename: string }[]
  budget: FeedBudget
  /** The export's rows (product_id, data): the import stage through the channel's filter and mapping. */
  rows: RawBuilder<unknown>
  /** The rows are the import stage's as they are (no filter, identity mapping). */
  passThrough: boolean
  /**
   * The previous export's rows, `stage_product o WHERE …`, as text: COPY statements take no
   * parameters, so the ids are written in (digits only).
   */
  previousRows: string
  /** The import stage's rows as a complete SELECT, as text for COPY. */
  importRowsSql: string
}

/**
 * Reads the import stage's columns, checks the channel's settings against them and compiles its
 * filter. A setting or filter the export cannot use fails here, before any work, as a RunFailure.
 */
export async function planExport(db: Db, site: Site, channel: Channel, pid: string, now: Date, limits: ExportLimits): Promise<ExportPlan> {
  const stageColumns = await importStageColumns(db, site.id)
  const { mapping, files } = exportSettings(site, channel, stageColumns, now)
  const budget: FeedBudget = {
    maxBytes: limits.feedMaxBytes,
    // On a connection of its own: the COPY's connection is busy sending the file.
    cancel: async (backendPid) => {
      await sql`SELECT pg_cancel_backend(${backendPid})`.execute(db)
    },
  }
  const condition = filterCondition(channel, stageColumns)
  const rows = sql`SELECT product_id, ${rowObject(mapping, stageColumns)} AS data FROM stage_product
        WHERE site_id = ${site.id} AND stage = 'import' AND stage_id = 0 AND ${condition}`
  const ids = { site: integer(site.id), channel: integer(channel.id) }
  return {
    site,
    channel,
    pid,
    now,
    columns: mapping.map((m) => m.column),
    files,
    budget,
    rows,
    passThrough: channel.filter.trim() === '' && isIdentity(mapping, stageColumns),
    previousRows: `stage_product o WHERE o.site_id = ${ids.site} AND o.stage = 'channel' AND o.stage_id = ${ids.channel}`,
    importRowsSql: `SELECT product_id, data FROM stage_product WHERE site_id = ${ids.site} AND stage = 'import' AND stage_id = 0`,
  }
}

/** The channel's filter over the import stage's rows; a filter that does not parse is the channel's to fix. */
function filterCondition(channel: Channel, stageColumns: string[]): RawBuilder<unknown> {
  if (channel.filter.trim() === '') return sql`true`
  try {
    return filterToSql(parseFilter(channel.filter, stageColumns), (column) => sql<string>`coalesce(data ->> ${column}, '')`)
  } catch (error) {
    if (!(error instanceof AppError)) throw error
    throw new RunFailure(SiteErrorCode.channelFilterInvalid, `Channel ${channel.id}: ${error.message}`, { channel_id: channel.id })
  }
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

// Ids go into COPY statements, which take no parameters: only digits can pass.
function integer(id: string): string {
  if (!/^\d+$/.test(id)) throw new Error(`not an integer id: ${id}`)
  return id
}
