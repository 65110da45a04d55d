import type { FeedFormat } from '../db/schema.js'

/** What a client needs to quote SQL: pg's own escaping, so raw configuration text never reaches SQL unquoted. */
export interface SqlQuoter {
  escapeLiteral(text: string): string
  escapeIdentifier(text: string): string
}

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
}

// Characters XML 1.0 does not allow: C0 controls other than tab, LF and CR, and U+FFFE/U+FFFF.
// (NUL cannot occur in Postgres text, and UTF-8 cannot carry lone surrogates.)
const XML_FORBIDDEN = [...Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).filter((c) => !'\t\n\r'.includes(c)), '\uFFFE', '\uFFFF'].join('')
const XML_FORBIDDEN_RE = new RegExp(`[${XML_FORBIDDEN}]`, 'g')
// CR as a reference: a parser would otherwise turn it into LF.
const XML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\r': '&#13;' }

/** The namespace prefixes an element name may carry; each is declared on the <rss> element. */
export const XML_NAMESPACES: Record<string, string> = { g: 'http://base.google.com/ns/1.0' }

// Postgres cuts identifiers, element names included, at NAMEDATALEN - 1 bytes: a longer name would
// come out silently shortened (an 80-character `g:` name loses its last 17 characters).
const MAX_XML_NAME_BYTES = 63

/**
 * Why `name` cannot be an element of an XML feed exactly as written, or undefined when it can: an
 * ASCII XML name, optionally with a declared prefix (`g:`). Postgres's xmlelement would otherwise
 * change it without an error: it rewrites characters a name cannot have (a space becomes `_x0020_`)
 * and `_x` (to `_x005F_x`), and cuts long names; names starting with `xml` are reserved by XML.
 */
export function xmlNameProblem(name: string): string | undefined {
  if (name === '') return 'it is empty'
  const match = /^(?:([^:]*):)?(.*)$/s.exec(name)
  const prefix = match?.[1]
  const local = match?.[2] ?? ''
  if (prefix !== undefined && !Object.hasOwn(XML_NAMESPACES, prefix)) {
    return `the prefix ${JSON.stringify(`${prefix}:`)} is not declared in the feed (only ${Object.keys(XML_NAMESPACES)
      .map((p) => `${p}:`)
      .join(', ')} is)`
  }
  if (!/^[A-Za-z_]/.test(local)) return `it must start with a letter or _${prefix === undefined ? '' : ' after its prefix'}`
  const bad = /[^A-Za-z0-9._-]/.exec(local)
  if (bad) return `${JSON.stringify(bad[0])} cannot be part of one (letters, digits, . _ - and an optional g: prefix)`
  if (/^xml/i.test(name)) return 'names starting with "xml", in any case, are reserved by XML'
  if (name.includes('_x')) return 'Postgres, which writes the element, would rewrite its "_x" to "_x005F_x"'
  if (name.length > MAX_XML_NAME_BYTES) {
    return `it has ${name.length} characters and Postgres, which writes the element, cuts names at ${MAX_XML_NAME_BYTES} (its identifier limit)`
  }
  return undefined
}

/** Whether `name` can be an element of an XML feed exactly as written (see xmlNameProblem). */
export function isXmlName(name: string): boolean {
  return xmlNameProblem(name) === undefined
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
export interface LineOptions {
  /** The element of each column in format xml (a template's namespace: `g:price`); the columns themselves by default. */
  elements?: readonly string[]
  /**
   * Format xml: elements (by their name without a namespace prefix) whose values are groups of
   * sub-elements, given in their colon form (`US:CA:Overnight:16.00 USD`), several separated by
   * commas: each group is one element with a sub-element per non-empty part, named in this order.
   */
  groups?: Readonly<Record<string, readonly string[]>> | undefined
  /** Format xml: elements (by their name without a prefix) whose comma-separated values are one element each. */
  repeated?: readonly string[] | undefined
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
      // Quoted when it holds the delimiter, a quote, CR or LF, or is the end-of-data marker \. alone:
      // the rules of Postgres' CSV output. One regular expression per value (measured: a scalar
      // subquery per value, to read the value once, costs twice as much).
      const special = q.escapeLiteral(`["${format === 'csv' ? ',' : '\t'}\r\n]|` + String.raw`^\\\.$`)
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

// Blanks around a value, and a value of nothing else: a value of only blanks is empty.
const XML_BLANKS = `E' \\t\\n\\r'`
// A comma or colon outside double quotes (an even number of quotes follows it): product_detail's
// values may quote a part that holds one (`Display:Diagonal Size:"2.5"""`). A comma before a digit
// does not start another group (each starts with a country, a period, a section or a name): it is a
// decimal comma (`DE::Standard:4,95 EUR`).
const UNQUOTED_COMMA = `',(?=[[:space:]]*[^0-9[:space:]])(?=(?:[^"]*"[^"]*")*[^"]*$)'`
const UNQUOTED_COLON = `':(?=(?:[^"]*"[^"]*")*[^"]*$)'`

/**
 * SQL: one XML item of elements, each value as its text. An empty value, or one of blanks only,
 * writes no element (Google reads an empty element as an attribute given empty). Group and
 * repeated elements (LineOptions) become several elements.
 */
function xmlItemSql(q: SqlQuoter, items: { element: string; value: string }[], how: LineOptions): string {
  const forbidden = q.escapeLiteral(XML_FORBIDDEN)
  const text = (v: string) => `translate(${v}, ${forbidden}, '')`
  // The text of a value, or NULL for one of blanks only (xmlforest writes no element for NULL).
  const present = (v: string) =>
    `CASE WHEN ascii(${v}) > 32 THEN nullif(${text(v)}, '') WHEN btrim(${text(v)}, ${XML_BLANKS}) = '' THEN NULL ELSE ${text(v)} END`
  const trimmed = (v: string) => `btrim(${v}, ${XML_BLANKS})`
  const name = (element: string) => q.escapeIdentifier(element)
  const parts: string[] = []
  let forest: string[] = []
  const flush = () => {
    if (forest.length > 0) parts.push(`xmlforest(${forest.join(', ')})`)
    forest = []
  }
  for (const { element, value } of items) {
    const colon = element.indexOf(':')
    const [prefix, local] = colon < 0 ? ['', element] : [element.slice(0, colon + 1), element.slice(colon + 1)]
    const subElements = how.groups?.[local]
    if (subElements) {
      flush()
      // A part in double quotes is written without them, a doubled quote inside as one.
      const part = (f: string) =>
        `CASE WHEN ${trimmed(f)} ~ '^".*"$' THEN replace(substr(${trimmed(f)}, 2, length(${trimmed(f)}) - 2), '""', '"') ELSE ${trimmed(f)} END`
      const subs = subElements.map((sub, i) => `nullif(${text(part(`f[${i + 1}]`))}, '') AS ${name(prefix + sub)}`)
      const groups = `SELECT xmlagg(xmlelement(name ${name(element)}, xmlforest(${subs.join(', ')})) ORDER BY n)
        FROM (SELECT regexp_split_to_array(e, ${UNQUOTED_COLON}) AS f, n
              FROM regexp_split_to_table(${value}, ${UNQUOTED_COMMA}) WITH ORDINALITY AS u(e, n) WHERE ${trimmed('e')} <> '') AS g`
      parts.push(`CASE WHEN ${present(value)} IS NULL THEN NULL ELSE (${groups}) END`)
    } else if (how.repeated?.includes(local)) {
      flush()
      const each = `SELECT xmlagg(xmlelement(name ${name(element)}, ${text(trimmed('p'))}) ORDER BY n)
        FROM unnest(string_to_array(${value}, ',')) WITH ORDINALITY AS u(p, n) WHERE ${trimmed('p')} <> ''`
      parts.push(`CASE WHEN ${present(value)} IS NULL THEN NULL ELSE (${each}) END`)
    } else {
      forest.push(`${present(value)} AS ${name(element)}`)
    }
  }
  flush()
  return `xmlelement(name item${parts.map((p) => `, ${p}`).join('')})::text`
}

/**
 * A file of lines, in key order: `linesSql` is a complete SELECT of (product_id, line). Binary
 * format: each line comes as it is stored (see copy-binary-lines.ts).
 */
export function linesPlan(linesSql: string, frame: FeedFrame): FeedPlan {
  return { copySql: `COPY (SELECT s.line FROM (${linesSql}) s ORDER BY s.product_id) TO STDOUT (FORMAT binary)`, ...frame }
}

/** A file rendered from rows of (product_id, data), for a file that is written once from rows. */
export function planFeed(q: SqlQuoter, rows: FeedRows, format: FeedFormat, meta: FeedMeta): FeedPlan {
  const line = lineSql(q, rows.columns, format, 'r.data')
  return linesPlan(`SELECT r.product_id, ${line} AS line FROM (${rows.selectSql}) r`, feedFrame(rows.columns, format, meta))
}

/** A field quoted the way Postgres's CSV output quotes one, for the header line. */
export function csvField(text: string, delimiter: string): string {
  const needsQuotes = text === '' || text === '\\.' || text.includes(delimiter) || /["\r\n]/.test(text)
  return needsQuotes ? `"${text.replaceAll('"', '""')}"` : text
}

/** Text content or attribute value for XML: escaped, characters XML cannot carry dropped. */
export function xmlEscape(text: string): string {
  return text.replace(XML_FORBIDDEN_RE, '').replace(/[&<>"'\r]/g, (c) => XML_ENTITIES[c] ?? c)
}

/**
 * A channel's rows in the channel stage, as the FROM and WHERE of a COPY (alias `o`). Ids go into
 * COPY statements, which take no parameters: only digits can pass.
 */
export function channelStageRows(siteId: string, channelId: string): string {
  return `stage_product o WHERE o.site_id = ${integer(siteId)} AND o.stage = 'channel' AND o.stage_id = ${integer(channelId)}`
}

function integer(id: string): string {
  if (!/^\d+$/.test(id)) throw new Error(`not an integer id: ${id}`)
  return id
}
