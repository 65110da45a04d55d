import type { FeedFormat } from '../db/schema.js'

/** What a client needs to quote SQL: pg's own escaping, so raw configuration text never reaches SQL unquoted. */
export interface SqlQuoter {
  escapeLiteral(text: string): string
  escapeIdentifier(text: string): string
}

export interface FeedRows {
  /** A complete SELECT (no bind parameters: COPY cannot take them) yielding columns product_id text and data jsonb (values are strings; a missing key means empty). The caller builds it from integer ids only. */
  selectSql: string
  /** Output columns in order (names of keys in data). */
  columns: string[]
}

export interface FeedMeta {
  title: string
  link: string
  description?: string
}

/** One file's COPY statement and the bytes around its output. */
export interface FeedPlan {
  copySql: string
  header: string
  footer: string
  /** COPY's text format escapes backslashes and control characters; CSV output needs no decoding. */
  textFormat: boolean
}

// Characters XML 1.0 does not allow: C0 controls other than tab, LF and CR, and U+FFFE/U+FFFF.
// (NUL cannot occur in Postgres text, and UTF-8 cannot carry lone surrogates.)
const XML_FORBIDDEN = [...Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).filter((c) => !'\t\n\r'.includes(c)), '\uFFFE', '\uFFFF'].join('')
const XML_FORBIDDEN_RE = new RegExp(`[${XML_FORBIDDEN}]`, 'g')
// CR as a reference: a parser would otherwise turn it into LF.
const XML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\r': '&#13;' }

/** The namespace prefixes an element name may carry; each is declared on the <rss> element. */
export const XML_NAMESPACES: Record<string, string> = { g: 'http://base.google.com/ns/1.0' }

/**
 * Whether `name` can be an element of an XML feed exactly as written: an ASCII XML name, optionally
 * with a declared prefix (`g:`). Refused besides: names starting with `xml` (reserved by XML),
 * names containing `_x` (Postgres's xmlelement rewrites `_x` to `_x005F_x`), and names longer than
 * 63 bytes (Postgres truncates identifiers).
 */
export function isXmlName(name: string): boolean {
  const match = /^(?:([A-Za-z][A-Za-z0-9]*):)?([A-Za-z_][A-Za-z0-9._-]*)$/.exec(name)
  if (!match) return false
  const prefix = match[1]
  if (prefix !== undefined && !Object.hasOwn(XML_NAMESPACES, prefix)) return false
  return !/^xml/i.test(name) && !name.includes('_x') && name.length <= 63
}

// Postgres allows at most 1664 output columns in a SELECT, which CSV and TSV have one per column.
// 1,600 is also the most columns a stage can have (MAX_STAGE_COLUMNS).
export const MAX_DELIMITED_COLUMNS = 1600

/** What keeps a channel's columns from being written in its format: the column, and why. */
export interface UnwritableColumns {
  column?: string
  reason: string
}

/**
 * Checks the output columns against what the format can carry, before any work: a channel whose
 * columns come from the import stage (no mapping) meets its names only at export time.
 */
export function unwritableColumns(columns: string[], format: FeedFormat): UnwritableColumns | undefined {
  if (format === 'xml') {
    const column = columns.find((c) => !isXmlName(c))
    if (column === undefined) return undefined
    return { column, reason: `${JSON.stringify(column)} is not a valid XML element name for format xml (letters, digits, . _ -, an optional g: prefix; not starting with "xml", without "_x", at most 63 characters)` }
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

export function planFeed(q: SqlQuoter, rows: FeedRows, format: FeedFormat, meta: FeedMeta): FeedPlan {
  const problem = unwritableColumns(rows.columns, format)
  if (problem) throw new UnwritableColumnsError(problem)
  const from = `FROM (${rows.selectSql}) r ORDER BY r.product_id`
  const value = (column: string) => `r.data->>${q.escapeLiteral(column)}`
  switch (format) {
    case 'csv':
    case 'tsv': {
      const delimiter = format === 'csv' ? ',' : '\t'
      // NULL prints as an unquoted empty field; Postgres quotes everything else that needs it.
      const list = rows.columns.map((c) => `NULLIF(${value(c)}, '')`).join(', ')
      const options = format === 'csv' ? 'FORMAT csv' : `FORMAT csv, DELIMITER ${q.escapeLiteral('\t')}`
      // The header is ours: COPY's HEADER would print column aliases, which Postgres cuts at 63 bytes.
      const header = rows.columns.map((c) => csvField(c, delimiter)).join(delimiter) + '\n'
      return { copySql: `COPY (SELECT ${list} ${from}) TO STDOUT WITH (${options})`, header, footer: '', textFormat: false }
    }
    case 'ndjson': {
      // Built as text rather than json_build_object: no 100-argument limit, and keys stay in order.
      const pairs = rows.columns.map((c) => `${q.escapeLiteral(JSON.stringify(c) + ':')} || to_json(coalesce(${value(c)}, ''))::text`)
      const line = pairs.length === 0 ? `'{}'` : `'{' || array_to_string(ARRAY[${pairs.join(', ')}], ',') || '}'`
      return { copySql: `COPY (SELECT ${line} ${from}) TO STDOUT`, header: '', footer: '', textFormat: true }
    }
    case 'xml': {
      const forbidden = q.escapeLiteral(XML_FORBIDDEN)
      const elements = rows.columns.map((c) => `xmlelement(name ${q.escapeIdentifier(c)}, translate(coalesce(${value(c)}, ''), ${forbidden}, ''))`)
      const item = `xmlelement(name item${elements.map((e) => `, ${e}`).join('')})::text`
      const namespaces = Object.entries(XML_NAMESPACES)
        .map(([prefix, uri]) => ` xmlns:${prefix}="${xmlEscape(uri)}"`)
        .join('')
      const header =
        `<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"${namespaces}><channel>` +
        `<title>${xmlEscape(meta.title)}</title><link>${xmlEscape(meta.link)}</link><description>${xmlEscape(meta.description ?? '')}</description>\n`
      return { copySql: `COPY (SELECT ${item} ${from}) TO STDOUT`, header, footer: '</channel></rss>\n', textFormat: true }
    }
  }
}

/** A field quoted the way Postgres's CSV output quotes one, for the header line. */
export function csvField(text: string, delimiter: string): string {
  const needsQuotes = text === '' || text === '\\.' || text.includes(delimiter) || /["\r\n]/.test(text)
  return needsQuotes ? `"${text.replaceAll('"', '""')}"` : text
}

/** Text content or attribute value for XML: escaped, characters XML cannot carry dropped. */
export function xmlEscape(text: string): string {
  return text
    .replace(XML_FORBIDDEN_RE, '')
    .replace(/[&<>"'\r]/g, (c) => XML_ENTITIES[c] ?? c)
}
