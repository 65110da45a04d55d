import type { SqlQuoter } from './sql-quoter.js'

// Feeds in format xml (RSS 2.0 items): which names can be elements, how text is escaped, and the SQL
// of one item. Postgres writes the elements (xmlelement, xmlforest); these say what it is given.

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
  if (!/^[A-Za-z_]/.test(local)) {
    return `it must start with an ASCII letter (A-Z, a-z) or _${prefix === undefined ? '' : ' after its prefix'}`
  }
  const bad = /[^A-Za-z0-9._-]/.exec(local)
  if (bad) return `${JSON.stringify(bad[0])} cannot be part of one (ASCII letters, digits, . _ - and an optional g: prefix)`
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

/** How an item's elements are written besides one element per value. */
export interface XmlItemOptions {
  /**
   * Elements (by their name without a namespace prefix) whose values are groups of sub-elements,
   * given in their colon form (`US:CA:Overnight:16.00 USD`), several separated by commas: each group
   * is one element with a sub-element per non-empty part, named in this order.
   */
  groups?: Readonly<Record<string, readonly string[]>> | undefined
  /** Elements (by their name without a prefix) whose comma-separated values are one element each. */
  repeated?: readonly string[] | undefined
}

/** Text content or attribute value for XML: escaped, characters XML cannot carry dropped. */
export function xmlEscape(text: string): string {
  return text.replace(XML_FORBIDDEN_RE, '').replace(/[&<>"'\r]/g, (c) => XML_ENTITIES[c] ?? c)
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
export function xmlItemSql(q: SqlQuoter, items: { element: string; value: string }[], how: XmlItemOptions): string {
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
