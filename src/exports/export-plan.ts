import { createHash } from 'node:crypto'
import { sql, type RawBuilder } from 'kysely'
import pg from 'pg'
import { filterToSql, parseFilter } from '../catalog/filter.js'
import type { Db } from '../db/database.js'
import type { Channel, ChannelFilename, Site } from '../db/schema.js'
import { AppError } from '../errors.js'
import { channelStageRows, feedFrame, lineSql, type FeedFrame } from '../feeds/feed-sql.js'
import { cancellingBudget, type FeedBudget } from '../feeds/feed-writer.js'
import { RunFailure, SiteErrorCode } from '../sites/run-failure.js'
import { templateNamed, GENERIC_TEMPLATE } from '../templates/template-catalog.js'
import { attributeColumns, compileChecks, type CompiledChecks } from '../templates/template-checks.js'
import type { ChannelTemplate } from '../templates/template-types.js'
import { exportSettings } from './export-failures.js'
import { changesOnlyRecipe } from '../imports/build-stage.js'
import { importStageOf } from './export-store.js'
import { checkedRows, rowObject, writtenColumn } from './export-rows.js'
import { channelStage, IMPORT_STAGE, inStage, sameImportRow } from '../db/stage-keys.js'

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
  /** The text of a file around its lines (header, footer). */
  frame: FeedFrame
  /**
   * The export's rows (product_id, data, issues, notes): the import stage through the channel's
   * filter and mapping, with the bits of the checks each fails and of the rewrites its line makes.
   */
  rows: RawBuilder<unknown>
  /** The export's rows among those whose product_id satisfies `condition` (a changed subset). */
  rowsWhere(condition: RawBuilder<unknown>): RawBuilder<unknown>
  /**
   * The feed line of a row: of `source.row`, a row of `rows` (whose values in another spelling than
   * the channel's it writes rewritten), or of the row data `source.data` as it is.
   */
  line(source: LineSource): RawBuilder<unknown>
  template: ChannelTemplate
  /** The template's checks for the channel's columns; none for a template without attributes (generic). */
  checks: CompiledChecks | undefined
  /** SQL: whether a row whose issues are the SQL expression `issues` is left out of the feed. */
  leftOut(issues: string): RawBuilder<unknown>
  /**
   * What the channel stage's rows and lines are made with (filter, mapping, columns, format, the
   * import stage's columns): a stage made with another one is compared and rendered again whole.
   */
  signature: string
  /** The channel stage's rows, `stage_product o WHERE …`, as text for COPY (ids written in, digits only). */
  stageRows: string
  /**
   * Whether the channel stage's clean rows refer to the import stage's rows instead of keeping
   * their data (src/imports/exported-data.ts): a channel without a mapping, on an import stage
   * built from the changes since its last build (so that an import copies only what it changes).
   */
  refersToImport: boolean
  /** SQL: the data a channel stage row keeps, for the row whose data and issues are the SQL expressions `data` and `issues`. */
  storedData(data: string, issues: string): RawBuilder<unknown>
  /**
   * The channel stage's rows (product_id, data, line, issues, notes); with `refers` (the stage was saved
   * referring), the data of rows that refer to the import stage is read from it.
   */
  channelRows(condition: RawBuilder<unknown>, refers: boolean): RawBuilder<unknown>
}

/** Where a line's values come from: the SQL of a row's data, and the alias of a row of ExportPlan.rows when it is one. */
export interface LineSource {
  data: string
  row?: string
}

const quoter = { escapeLiteral: pg.escapeLiteral, escapeIdentifier: pg.escapeIdentifier }

/**
 * Reads the import stage's columns, checks the channel's settings against them and compiles its
 * filter. A setting or filter the export cannot use fails here, before any work, as a RunFailure.
 */
export async function planExport(
  db: Db,
  { site, channel, pid, now, limits }: { site: Site; channel: Channel; pid: string; now: Date; limits: ExportLimits },
): Promise<ExportPlan> {
  const importStage = await importStageOf(db, site.id)
  const stageColumns = importStage?.columns ?? []
  const refersToImport = channel.mapping.length === 0 && changesOnlyRecipe(importStage?.recipe ?? '')
  const { mapping, files } = exportSettings(site, channel, stageColumns, now)
  const condition = filterCondition(channel, stageColumns)
  const object = rowObject(channel, mapping)
  const columns = mapping.map((m) => m.column)
  const template = templateNamed(channel.template) ?? GENERIC_TEMPLATE
  const checks = template.attributes.length === 0 ? undefined : compileChecks(quoter, template, columns, { currency: channel.currency })
  const rowsWhere = (also: RawBuilder<unknown>) => {
    const where = sql`${inStage('stage_product', site.id, IMPORT_STAGE)} AND ${condition} AND ${also}`
    if (!checks) return sql`SELECT product_id, ${object} AS data, NULL::bigint AS issues, NULL::bigint AS notes FROM stage_product WHERE ${where}`
    return checkedRows({ channel, mapping, columns, checks, where })
  }
  const rows = rowsWhere(sql`true`)
  // A template's namespace on the channel's own names: a Google feed's `price` is its `<g:price>`.
  const elements = template.xmlPrefix ? columns.map((c) => (c.includes(':') ? c : `${template.xmlPrefix}:${c}`)) : columns
  // A row of `rows` carries each value the template may rewrite as the file writes it (writtenColumn).
  const rewritten = new Set(checks?.rewrittenColumns ?? [])
  const lineOf = ({ data, row }: LineSource) =>
    lineSql(quoter, columns, channel.format, data, {
      elements,
      groups: template.xmlGroups,
      repeated: template.xmlRepeated,
      written: (column, value) => (row !== undefined && rewritten.has(column) ? `${row}.${writtenColumn(columns, column)}` : value),
    })
  const errorMask = checks && channel.validation_mode === 'exclude' ? checks.errorMask : 0n
  const compiled = rows.compile(db)
  // What the stage's rows and lines are made with: the signature's input.
  const making = [
    channel.format,
    columns,
    stageColumns,
    compiled.sql,
    compiled.parameters,
    lineOf({ data: 'data', row: 'r' }),
    template,
    errorMask.toString(),
    refersToImport,
  ]
  const link = channel.format === 'xml' ? await websiteOf(db, rows, columns) : ''
  const meta = { title: `${site.title}: ${channel.name}`, link, description: `Channel ${channel.id} of site ${site.id}` }
  return {
    site,
    channel,
    pid,
    now,
    columns,
    files,
    rows,
    rowsWhere,
    template,
    checks,
    refersToImport,
    budget: cancellingBudget(db, limits.feedMaxBytes),
    frame: feedFrame(columns, channel.format, meta),
    line: (source) => sql.raw(lineOf(source)),
    leftOut: (issues) => (errorMask === 0n ? sql`false` : sql.raw(`coalesce(${issues} & ${errorMask.toString()}::bigint, 0) <> 0`)),
    signature: createHash('sha256').update(JSON.stringify(making)).digest('hex'),
    stageRows: channelStageRows(site.id, channel.id),
    storedData: (data, issues) => (refersToImport ? sql.raw(`CASE WHEN ${issues} IS NULL THEN NULL ELSE ${data} END`) : sql.raw(data)),
    channelRows: channelRowsOf(site, channel),
  }
}

/**
 * The website an XML feed's items come from, for RSS's channel link: the origin of the first
 * product's `link` (as Google's items have one), '' when no column carries one.
 */
async function websiteOf(db: Db, rows: RawBuilder<unknown>, columns: string[]): Promise<string> {
  const column = attributeColumns(columns).get('link')
  if (column === undefined) return ''
  // Among the first thousand rows at most: a catalog without links must not be read whole for it.
  const { rows: found } = await sql<{ link: string }>`SELECT link FROM (SELECT r.data ->> ${column} AS link FROM (${rows}) AS r LIMIT 1000) AS l
    WHERE link ~* '^\s*https?://[^/]' LIMIT 1`.execute(db)
  try {
    return found[0] ? new URL(found[0].link.trim()).origin : ''
  } catch {
    return ''
  }
}

/** ExportPlan.channelRows of this channel: the rows its stage keeps, with the data referring rows read from the import stage. */
function channelRowsOf(site: Site, channel: Channel): ExportPlan['channelRows'] {
  return (also, refers) => {
    const ofChannel = sql`${inStage('c', site.id, channelStage(channel.id))} AND ${also}`
    if (!refers) return sql`SELECT c.product_id, c.data, c.line, c.issues, c.notes FROM stage_product c WHERE ${ofChannel}`
    return sql`SELECT c.product_id, coalesce(c.data, i.data) AS data, c.line, c.issues, c.notes
      FROM stage_product c LEFT JOIN stage_product i
        ON c.data IS NULL AND ${sameImportRow('i', 'c', site.id)}
      WHERE ${ofChannel}`
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
