import { createHash } from 'node:crypto'
import { sql, type RawBuilder } from 'kysely'
import { filterToSql, parseFilter } from '../catalog/filter.js'
import type { Db } from '../db/database.js'
import type { Channel, ChannelFilename, Site } from '../db/schema.js'
import { AppError } from '../errors.js'
import {
  channelStageData,
  channelStageRows,
  feedFrame,
  isRenderedFormat,
  lineSql,
  type FeedFrame,
  type RenderedFormat,
  type RenderedRows,
  type StageData,
} from '../feeds/feed-sql.js'
import { cancellingBudget, type FeedBudget } from '../feeds/feed-writer.js'
import { RunFailure, SiteErrorCode } from '../sites/run-failure.js'
import { templateNamed, GENERIC_TEMPLATE } from '../templates/template-catalog.js'
import { attributeColumns, compileChecks, type CompiledChecks } from '../templates/template-checks.js'
import type { ChannelTemplate } from '../templates/template-types.js'
import { exportSettings } from './export-failures.js'
import { changesOnlyRecipe } from '../imports/build-stage.js'
import { importStageOf } from './export-store.js'
import { channelRows, writtenColumn, type PreviewTrack } from './export-rows.js'
import { intermediateColumns } from '../rules/intermediate-stage.js'
import { rulesOfScope } from '../rules/rule-store.js'
import type { RuleSpec } from '../rules/rule-types.js'
import type { RulePipeline } from '../rules/rule-pipeline.js'
import { quoter } from '../feeds/sql-quoter.js'
import type { Referral } from '../db/referred-data.js'
import { channelRowsOf, importRowsOf, referredMapping, sourceRows } from './export-plan-rows.js'

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
  /** The channel's rules as the rows run them (none without enabled rules): a preview reads its steps' columns. */
  rulePipeline: RulePipeline | undefined
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
  /** The channel stage's rows with their values, for a COPY of rendered lines (see channelStageData). */
  stageData: StageData
  /**
   * The export's rows straight from the import stage, as text for a COPY: for a stage of lines
   * rendered on read whose rows are the import stage's through the mapping alone (no filter, no
   * rule), so that its full file can be written beside the stage's rows (see exportChannel).
   */
  importRows: RenderedRows | undefined
  /**
   * The format the channel stage's lines are rendered in when read (its rows store none), or null
   * when each row stores its line: a CSV or TSV channel whose template rewrites no value and leaves
   * no row out, so that every row's line is its data as COPY's CSV writer renders it.
   */
  linesOnRead: RenderedFormat | null
  /**
   * How the channel stage's clean rows refer to the import stage's rows instead of keeping their
   * data (src/db/referred-data.ts): as they are, or through the mapping. Only on an import stage
   * built from the changes since its last build (so that an import copies only what it changes).
   */
  referral: Referral | undefined
  /**
   * SQL: the data a channel stage keeps of the row aliased `row` (with data, issues and changed):
   * none when it refers to the import stage's row, clean and unchanged by rules; its data otherwise.
   */
  storedData(row: string): RawBuilder<unknown>
  /**
   * The channel stage's rows (product_id, data, line, issues, notes); with the `referral` the stage
   * was saved with, the data of rows that refer to the import stage is made from it.
   */
  channelRows(condition: RawBuilder<unknown>, referral: Referral | undefined): RawBuilder<unknown>
}

/** What planExport is asked: the channel's export, and for a preview its rules' drafts and steps. */
export interface PlanRequest {
  site: Site
  channel: Channel
  pid: string
  now: Date
  limits: ExportLimits
  /** Drafts that stand in for the saved rules of the site or the channel (a preview); each list in order, enabled ones only run. */
  drafts?: { site?: RuleSpec[]; channel?: RuleSpec[] }
  /** Keeps what each channel rule did beside each row (a preview: export-rows.ts). */
  track?: PreviewTrack
}

/** Where a line's values come from: the SQL of a row's data, and the alias of a row of ExportPlan.rows when it is one. */
export interface LineSource {
  data: string
  row?: string
}

/**
 * Reads the import stage's columns, checks the channel's settings against them and compiles its
 * filter. A setting or filter the export cannot use fails here, before any work, as a RunFailure.
 */
export async function planExport(db: Db, request: PlanRequest): Promise<ExportPlan> {
  const { site, channel, now, limits } = request
  const importStage = await importStageOf(db, site.id)
  const rules = await rulesOf(db, request)
  const stageColumns = intermediateColumns(importStage?.columns ?? [], rules.site)
  const identity = channel.mapping.length === 0
  const created = intermediateColumns([], rules.channel)
  const { mapping, files } = exportSettings(site, channel, stageColumns, now, created)
  const condition = filterCondition(channel, stageColumns)
  const columns = intermediateColumns(
    mapping.map((m) => m.column),
    rules.channel,
  )
  const template = templateNamed(channel.template) ?? GENERIC_TEMPLATE
  const checks = template.attributes.length === 0 ? undefined : compileChecks(quoter, template, columns, { currency: channel.currency })
  const rowsOf = (also: RawBuilder<unknown>) =>
    channelRows({ mapping, identity, columns, checks, rules: rules.channel, source: sourceRows(site.id, rules.site, condition, also), track: request.track })
  const rowsWhere = (also: RawBuilder<unknown>) => rowsOf(also).rows
  const { rows, pipeline: rulePipeline } = rowsOf(sql`true`)
  const written = rulePipeline?.written ?? []
  const referral = changesOnlyRecipe(importStage?.recipe ?? '') ? { mapping: identity ? null : referredMapping(mapping, columns, written) } : undefined
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
  const linesOnRead = isRenderedFormat(channel.format) && errorMask === 0n && rewritten.size === 0 ? channel.format : null
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
    referral,
    linesOnRead,
  ]
  const link = channel.format === 'xml' ? await websiteOf(db, rows, columns) : ''
  const meta = { title: `${site.title}: ${channel.name}`, link, description: `Channel ${channel.id} of site ${site.id}` }
  return {
    site,
    channel,
    pid: request.pid,
    now,
    columns,
    files,
    rows,
    rowsWhere,
    rulePipeline,
    template,
    checks,
    referral,
    linesOnRead,
    budget: cancellingBudget(db, limits.feedMaxBytes),
    frame: feedFrame(columns, channel.format, meta),
    line: (source) => sql.raw(lineOf(source)),
    leftOut: (issues) => (errorMask === 0n ? sql`false` : sql.raw(`coalesce(${issues} & ${errorMask.toString()}::bigint, 0) <> 0`)),
    signature: createHash('sha256').update(JSON.stringify(making)).digest('hex'),
    stageRows: channelStageRows(site.id, channel.id),
    stageData: channelStageData(site.id, channel.id, referral),
    importRows:
      linesOnRead && rules.site.length === 0 && rules.channel.length === 0 && channel.filter.trim() === ''
        ? importRowsOf(site.id, { columns, format: linesOnRead, mapping: identity ? undefined : mapping })
        : undefined,
    storedData: (row) => sql.raw(referral ? `CASE WHEN ${row}.issues IS NULL AND NOT ${row}.changed THEN NULL ELSE ${row}.data END` : `${row}.data`),
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

/** The enabled rules of the site and of the channel: the saved ones, or the drafts standing in for them. */
async function rulesOf(db: Db, { site, channel, drafts }: PlanRequest): Promise<{ site: RuleSpec[]; channel: RuleSpec[] }> {
  const saved = async (channelId: string | null) => rulesOfScope(db, site.account_id, { siteId: site.id, channelId })
  const enabled = (rules: RuleSpec[]) => rules.filter((rule) => rule.enabled)
  return { site: enabled(drafts?.site ?? (await saved(null))), channel: enabled(drafts?.channel ?? (await saved(channel.id))) }
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
