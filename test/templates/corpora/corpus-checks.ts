import type { TemplateJson } from '../template-examples.js'
import { stored, type CorpusProduct } from './corpus-kit.js'
import type { CorpusChannel, Element } from './corpus-run.js'

// What a corpus's products must show in a channel's files, diagnostics and summary, from what each
// product states it expects. Each check returns the products that differ, one line each, so that a
// failure names every product it concerns rather than the first.

/** Google's attributes written in format xml as one element per comma-separated value. */
const XML_REPEATED = new Set(['additional_image_link', 'lifestyle_image_link', 'size_type', 'excluded_destination', 'included_destination'])
/** Google's group attributes in format xml: one element per comma-separated group, a sub-element per non-empty part. */
const XML_GROUPS: Record<string, string[]> = { shipping: ['country', 'region', 'service', 'price'] }

const XML_BLANKS = /^[ \t\n\r]+|[ \t\n\r]+$/g
const trimmed = (text: string) => text.replace(XML_BLANKS, '')

/** The value the feed must carry: the canonical spelling the product states, else the value as stored. */
export const feedValue = (p: CorpusProduct, column: string) => p.expect.feed[column] ?? stored(p.row[column])
const show = (value: unknown) => JSON.stringify(value)

/** The XML form of a text value: no element for a blank one, several for a list or groups. */
function xmlForm(column: string, value: string): Element | undefined {
  const groupParts = XML_GROUPS[column]
  if (groupParts) {
    const groups = value
      .split(',')
      .filter((g) => trimmed(g) !== '')
      .map((g) => Object.fromEntries(groupParts.flatMap((name, i) => (trimmed(g.split(':')[i] ?? '') === '' ? [] : [[name, trimmed(g.split(':')[i] ?? '')]]))))
    return groups.length === 0 ? undefined : groups.length === 1 ? groups[0] : groups
  }
  if (XML_REPEATED.has(column)) {
    const values = value
      .split(',')
      .map(trimmed)
      .filter((v) => v !== '')
    return values.length === 0 ? undefined : values.length === 1 ? values[0] : values
  }
  return trimmed(value) === '' ? undefined : value
}

/** Exported products whose record differs from the values they state (every column), and records of products not exported. */
export function feedProblems(products: CorpusProduct[], channel: CorpusChannel, columns: string[], key: string): string[] {
  const problems: string[] = []
  const expected = products.filter((p) => p.expect.exported)
  const keys = new Set(expected.map((p) => stored(p.row[key])))
  for (const found of channel.feed.keys()) if (!keys.has(found)) problems.push(`${found}: in the feed, expected left out`)
  for (const p of expected) {
    const record = channel.feed.get(stored(p.row[key]))
    if (!record) {
      problems.push(`${p.id}: not in the feed (${p.source})`)
      continue
    }
    for (const column of columns) {
      const want = channel.format === 'xml' ? xmlForm(column, feedValue(p, column)) : feedValue(p, column)
      if (show(record[column]) !== show(want))
        problems.push(`${p.id}.${column}: feed has ${show(record[column])}, expected ${show(want)} (sent ${show(p.row[column])})`)
    }
    const extra = Object.keys(record).filter((name) => !columns.includes(name))
    if (extra.length > 0) problems.push(`${p.id}: elements outside the columns: ${extra.join(', ')}`)
  }
  return problems
}

/** The template's codes in its order, with their severity and attribute. */
const checksOf = (template: TemplateJson) => new Map(template.checks.map((c) => [c.code, c]))

/** Products whose statement contradicts the template: an unknown code, or exported while one of its codes is an error (or the reverse). */
export function statementProblems(products: CorpusProduct[], template: TemplateJson): string[] {
  const checks = checksOf(template)
  return products.flatMap((p) => {
    const unknown = p.expect.codes.filter((code) => !checks.has(code))
    const hasError = p.expect.codes.some((code) => checks.get(code)?.severity === 'error')
    return [
      ...(unknown.length > 0 ? [`${p.id}: codes ${unknown.join(', ')} are not the template's`] : []),
      ...(hasError === p.expect.exported ? [`${p.id}: states exported ${p.expect.exported} with codes ${p.expect.codes.join(', ')}`] : []),
    ]
  })
}

/** Left-out products missing from the skipped file or listed with another first error or value; exported products listed in it. */
export function skippedProblems(products: CorpusProduct[], channel: CorpusChannel, template: TemplateJson): string[] {
  const problems: string[] = []
  const errors = template.checks.filter((c) => c.severity === 'error')
  for (const p of products) {
    const record = channel.skipped.get(p.id)
    if (p.expect.exported) {
      if (record) problems.push(`${p.id}: in the skipped file with ${record.code}, expected exported`)
      continue
    }
    const first = errors.find((c) => p.expect.codes.includes(c.code))
    const quoted = stored(p.row[first?.attribute ?? '']).slice(0, 200)
    // In format xml a value of blanks only (space, tab, line end) is no element: read back as ''.
    const value = channel.format === 'xml' && /^[ \t\n\r]*$/.test(quoted) ? '' : quoted
    const want = { id: p.id, attribute: first?.attribute, code: first?.code, value, message: first?.message, hint: first?.hint }
    const got = record && {
      id: record.id,
      attribute: record.attribute,
      code: record.code,
      value: record.value ?? '',
      message: record.message,
      hint: record.hint,
    }
    if (show(got) !== show(want)) problems.push(`${p.id}: skipped file has ${show(got)}, expected ${show(want)} (${p.source})`)
  }
  return problems
}

/** Products whose diagnostics list other codes than they state, quote a value other than the one stored, or describe a code otherwise than the template. */
export function diagnosticProblems(products: CorpusProduct[], channel: CorpusChannel, template: TemplateJson): string[] {
  const checks = checksOf(template)
  const byId = new Map<string, CorpusChannel['diagnostics']>()
  for (const d of channel.diagnostics) byId.set(d.id, [...(byId.get(d.id) ?? []), d])
  const known = new Set(products.map((p) => p.id))
  const problems = [...byId.keys()].filter((id) => !known.has(id)).map((id) => `${id}: diagnostics of a product not in the corpus`)
  for (const p of products) {
    const listed = byId.get(p.id) ?? []
    const codes = listed.map((d) => d.code).sort()
    if (show(codes) !== show([...p.expect.codes].sort())) {
      const values = listed.map((d) => `${d.code}=${show(d.value)}`).join(' ')
      problems.push(`${p.id}: lists [${codes.join(', ')}], expected [${[...p.expect.codes].sort().join(', ')}] (${p.source}; ${values})`)
    }
    for (const d of listed) {
      const check = checks.get(d.code)
      const value = stored(p.row[d.attribute]).slice(0, 200)
      const described = check && d.attribute === check.attribute && d.severity === check.severity && d.message === check.message && d.hint === check.hint
      if (d.value !== value || !described) {
        problems.push(`${p.id}: ${d.code} quotes ${show(d.value)} of ${d.attribute} (${d.severity}), stored ${show(value)}`)
      }
    }
  }
  return problems
}

/** The summary a channel in mode exclude must give of the corpus. */
export function expectedSummary(products: CorpusProduct[], template: TemplateJson) {
  const checks = checksOf(template)
  const has = (p: CorpusProduct, severity: string) => p.expect.codes.some((code) => checks.get(code)?.severity === severity)
  const count = (test: (p: CorpusProduct) => boolean) => products.filter(test).length
  const byCode = Object.fromEntries(template.checks.map((c) => [c.code, count((p) => p.expect.codes.includes(c.code))] as const).filter(([, n]) => n > 0))
  const bySeverity = (severity: string) => template.checks.filter((c) => c.severity === severity).reduce((sum, c) => sum + (byCode[c.code] ?? 0), 0)
  const leftOut = count((p) => !p.expect.exported)
  return {
    counts: {
      products_checked: products.length,
      products_exported: products.length - leftOut,
      products_left_out: leftOut,
      products_with_errors: count((p) => has(p, 'error')),
      products_with_warnings: count((p) => has(p, 'warning')),
      products_exported_with_warnings: count((p) => p.expect.exported && has(p, 'warning')),
      by_severity: { error: bySeverity('error'), warning: bySeverity('warning'), info: bySeverity('info') },
    },
    byCode,
  }
}
