import type { FeedFormat } from '../db/schema.js'
import type { SqlQuoter } from './sql-quoter.js'
import { XML_NAMESPACES, xmlEscape, xmlItemSql, xmlNameProblem, type XmlItemOptions } from './feed-xml.js'
import { channelStage, IMPORT_STAGE, inStageText } from '../db/stage-keys.js'
import { referredValueText, type Referral } from '../db/referred-data.js'

export { isXmlName } from './feed-xml.js'

export interface FeedRows {
  /**
   * A complete SELECT (no bind parameters: COPY cannot take them) yielding columns product_id text and
   * data jsonb (values are strings; a missing key means empty). The caller builds it from integer ids only.
   */
  selectSql: string
  /** Output columns in order (names of keys in data). */
  columns: string[]
}

export interface FeedMeta {
  title: string
  /** The address of the website the feed's items come from (RSS's channel link); written when known. */
  link: string
  description?: string
}

/** One file's COPY statement and the bytes around its output. */
export interface FeedPlan {
  copySql: string
  header: string
  footer: string
  /**
   * What the COPY sends: `lines`, one text value per row in binary format (each a line, written with a
   * newline); `file`, the file's lines themselves (COPY's own CSV output).
   */
  output: 'lines' | 'file'
  /** Planner settings of the COPY's statement (SET LOCAL before it, RESET after). */
  settings?: Record<string, 'on' | 'off'>
}

// Postgres allows at most 1664 output columns in a SELECT, which CSV and TSV have one per column.
// 1,600 is also the most columns a stage can have (MAX_STAGE_COLUMNS).
export const MAX_DELIMITED_COLUMNS = 1600

/** What keeps a channel's columns from being written in its format: the column (and its position), and why. */
export interface UnwritableColumns {
  column?: string
  index?: number
  reason: string
}

/**
 * Checks the output columns against what the format can carry, before any work: a channel whose
 * columns come from the import stage (no mapping) meets its names only at export time.
 */
export function unwritableColumns(columns: string[], format: FeedFormat): UnwritableColumns | undefined {
  if (format === 'xml') {
    for (const [index, column] of columns.entries()) {
      const problem = xmlNameProblem(column)
      if (problem !== undefined) return { column, index, reason: `${JSON.stringify(column)} is not a valid XML element name for format xml: ${problem}` }
    }
    return undefined
  }
  if ((format === 'csv' || format === 'tsv') && columns.length > MAX_DELIMITED_COLUMNS) {
    return { reason: `${columns.length} columns are more than format ${format} can carry (at most ${MAX_DELIMITED_COLUMNS})` }
  }
  return undefined
}

/** A column list the format cannot carry (see unwritableColumns). */
export class UnwritableColumnsError extends Error {
  constructor(readonly problem: UnwritableColumns) {
    super(problem.reason)
    this.name = 'UnwritableColumnsError'
  }
}

export function contentTypeOf(format: FeedFormat): string {
  switch (format) {
    case 'csv':
      return 'text/csv; charset=utf-8'
    case 'tsv':
      return 'text/tab-separated-values; charset=utf-8'
    case 'ndjson':
      return 'application/x-ndjson; charset=utf-8'
    case 'xml':
      return 'application/xml; charset=utf-8'
  }
}

/** What a file has around its lines: the CSV/TSV header line, the XML document's head and tail. */
export interface FeedFrame {
  header: string
  footer: string
}

export function feedFrame(columns: string[], format: FeedFormat, meta: FeedMeta): FeedFrame {
  switch (format) {
    case 'csv':
    case 'tsv': {
      const delimiter = format === 'csv' ? ',' : '\t'
      // Ours, not COPY's HEADER, which would print column aliases that Postgres cuts at 63 bytes.
      return { header: columns.map((c) => csvField(c, delimiter)).join(delimiter) + '\n', footer: '' }
    }
    case 'ndjson':
      return { header: '', footer: '' }
    case 'xml': {
      const namespaces = Object.entries(XML_NAMESPACES)
        .map(([prefix, uri]) => ` xmlns:${prefix}="${xmlEscape(uri)}"`)
        .join('')
      const header =
        `<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"${namespaces}><channel>` +
        `<title>${xmlEscape(meta.title)}</title>${meta.link === '' ? '' : `<link>${xmlEscape(meta.link)}</link>`}` +
        `<description>${xmlEscape(meta.description ?? '')}</description>\n`
      return { header, footer: '</channel></rss>\n' }
    }
  }
}

/** How a line is written besides its columns. */
export interface LineOptions extends XmlItemOptions {
  /** The element of each column in format xml (a template's namespace: `g:price`); the columns themselves by default. */
  elements?: readonly string[]
  /** The SQL of a column's value as written, from the SQL of its value in the row (a template's normalisation). */
  written?: ((column: string, value: string) => string) | undefined
}

/**
 * The SQL expression (text) of one row's line, without its newline, from the jsonb expression
 * `data`: a CSV/TSV record quoted by the rules of Postgres' own CSV output, an NDJSON object, an XML
 * item. Lines are rendered once, when a row is new or changed, and kept (ARCHITECTURE.md, "A small change costs a small run").
 */
export function lineSql(q: SqlQuoter, columns: string[], format: FeedFormat, data: string, how: LineOptions = {}): string {
  const elements = how.elements ?? columns
  const problem = unwritableColumns(format === 'xml' ? [...elements] : columns, format)
  if (problem) throw new UnwritableColumnsError(problem)
  const read = (column: string) => `(${data})->>${q.escapeLiteral(column)}`
  const value = how.written ? (column: string) => how.written?.(column, read(column)) ?? read(column) : read
  switch (format) {
    case 'csv':
    case 'tsv': {
      const delimiter = format === 'csv' ? ',' : '\t'
      // Quoted when it holds the delimiter, a quote, CR or LF, or, in a line of one column, is the
      // end-of-data marker \. alone: the rules of Postgres' CSV output, byte for byte, so that a line
      // stored and the same row written by COPY (renderedLinesPlan) are one. One regular expression
      // per value (measured: a scalar subquery per value, to read the value once, costs twice as much).
      const marker = columns.length === 1 ? '|' + String.raw`^\\\.$` : ''
      const special = q.escapeLiteral(`["${format === 'csv' ? ',' : '\t'}\r\n]${marker}`)
      const field = (c: string) => `CASE WHEN ${value(c)} ~ ${special} THEN '"' || replace(${value(c)}, '"', '""') || '"' ELSE coalesce(${value(c)}, '') END`
      if (columns.length === 0) return `''`
      return columns.map(field).join(` || ${q.escapeLiteral(delimiter)} || `)
    }
    case 'ndjson': {
      // Built as text rather than json_build_object: no 100-argument limit, and keys stay in order.
      const pairs = columns.map((c) => `${q.escapeLiteral(JSON.stringify(c) + ':')} || to_json(coalesce(${value(c)}, ''))::text`)
      return pairs.length === 0 ? `'{}'` : `'{' || array_to_string(ARRAY[${pairs.join(', ')}], ',') || '}'`
    }
    case 'xml':
      return xmlItemSql(
        q,
        columns.map((c, i) => ({ element: elements[i] ?? c, value: value(c) })),
        how,
      )
  }
}

/**
 * A file of lines, in key order: `linesSql` is a complete SELECT of (product_id, line). Binary
 * format: each line comes as it is stored (see copy-binary-lines.ts).
 */
export function linesPlan(linesSql: string, frame: FeedFrame): FeedPlan {
  return { copySql: `COPY (SELECT s.line FROM (${linesSql}) s ORDER BY s.product_id) TO STDOUT (FORMAT binary)`, ...frame, output: 'lines' }
}

/** The formats whose lines COPY's own CSV writer renders as lineSql does. */
export type RenderedFormat = 'csv' | 'tsv'

export function isRenderedFormat(format: FeedFormat): format is RenderedFormat {
  return format === 'csv' || format === 'tsv'
}

/** Rows whose lines are rendered as they are read: see renderedLinesPlan. */
export interface RenderedRows {
  /** A complete SELECT of (product_id, data), its row aliased `s` for `valueSql`. */
  rowsSql: string
  columns: string[]
  format: RenderedFormat
  /** The SQL text of a column's value in a row `s` (default: its data's member of that name). */
  valueSql?: (column: string) => string
}

/**
 * A file whose lines are rendered as they are read: `rowsSql` is a complete SELECT of (product_id,
 * data), written in key order by COPY's CSV writer, each value read from data, an empty one as NULL
 * (which COPY writes as nothing, as lineSql writes ''). The same bytes as lineSql's lines
 * (test/feeds/rendered-lines.test.ts), at the speed of COPY: no line is built in SQL.
 */
export function renderedLinesPlan(q: SqlQuoter, rows: RenderedRows, frame: FeedFrame): FeedPlan {
  const { rowsSql, columns, format, valueSql = (column) => `s.data ->> ${q.escapeLiteral(column)}` } = rows
  const problem = unwritableColumns(columns, format)
  if (problem) throw new UnwritableColumnsError(problem)
  const values = columns.map((c) => `nullif(${valueSql(c)}, '')`).join(', ')
  const delimiter = format === 'tsv' ? `, DELIMITER E'\\t'` : ''
  const copySql = `COPY (SELECT ${values} FROM (${rowsSql}) s ORDER BY s.product_id) TO STDOUT (FORMAT csv${delimiter})`
  // A channel stage is read in key order beside the import stage's rows it refers to: a merge of the
  // two primary key scans. Right after an export wrote the stage, its statistics say it is empty,
  // and the planner's nested loop read the whole import stage per row (40,000 rows: minutes, measured).
  return { copySql, ...frame, output: 'file', settings: { enable_nestloop: 'off', enable_hashjoin: 'off' } }
}

/** A file rendered from rows of (product_id, data), for a file that is written once from rows. */
export function planFeed(q: SqlQuoter, rows: FeedRows, format: FeedFormat, meta: FeedMeta): FeedPlan {
  const line = lineSql(q, rows.columns, format, 'r.data')
  return linesPlan(`SELECT r.product_id, ${line} AS line FROM (${rows.selectSql}) r`, feedFrame(rows.columns, format, meta))
}

/**
 * One row's line as COPY's CSV writer renders it (renderedLinesPlan), from its values in column
 * order ('' for a missing one): for a person looking at one row, not for a file.
 */
export function renderedLine(values: string[], format: RenderedFormat): string {
  const delimiter = format === 'csv' ? ',' : '\t'
  // An empty value is COPY's NULL (unquoted); the end-of-data marker needs quotes only alone on its line.
  return values.map((value) => csvField(value, delimiter, { empty: false, marker: values.length === 1 })).join(delimiter)
}

/**
 * A field quoted the way Postgres's CSV output quotes one: when it holds the delimiter, a quote, CR
 * or LF; with `empty`, when it is empty; with `marker`, when it is the end-of-data marker \. (both
 * by default, as the header line quotes its names).
 */
export function csvField(text: string, delimiter: string, quote: { empty?: boolean; marker?: boolean } = {}): string {
  const { empty = true, marker = true } = quote
  const needsQuotes = (empty && text === '') || (marker && text === '\\.') || text.includes(delimiter) || /["\r\n]/.test(text)
  return needsQuotes ? `"${text.replaceAll('"', '""')}"` : text
}

/**
 * A channel's rows in the channel stage, as the FROM and WHERE of a COPY (alias `o`). Ids go into
 * COPY statements, which take no parameters: only digits can pass.
 */
export function channelStageRows(siteId: string, channelId: string): string {
  return `stage_product o WHERE ${inStageText('o', siteId, channelStage(channelId))}`
}

/**
 * A channel's rows in the channel stage with their values, for a COPY of rendered lines: a
 * complete SELECT of (product_id, data, import_data), and each column's value in such a row `s`.
 * With the `referral` the stage was saved with, a row without data of its own is made from the
 * import stage's row of the same id (src/db/referred-data.ts), each value read from it as the row's
 * data would give it: a flattened SELECT of the made data would make it once per column.
 */
export function channelStageData(siteId: string, channelId: string, referral: Referral | undefined): StageData {
  const valueSql = (column: string) => referredValueText('s.data', 's.import_data', referral, column)
  if (!referral) return { rowsSql: `SELECT o.product_id, o.data, NULL::jsonb AS import_data FROM ${channelStageRows(siteId, channelId)}`, valueSql }
  const rowsSql = `SELECT o.product_id, o.data, i.data AS import_data FROM stage_product o
    LEFT JOIN stage_product i ON o.data IS NULL AND ${inStageText('i', siteId, IMPORT_STAGE)} AND i.product_id = o.product_id
    WHERE ${inStageText('o', siteId, channelStage(channelId))}`
  return { rowsSql, valueSql }
}

/** A channel stage's rows for renderedLinesPlan (channelStageData). */
export type StageData = Required<Pick<RenderedRows, 'rowsSql' | 'valueSql'>>
