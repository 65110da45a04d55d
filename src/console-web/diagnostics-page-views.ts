import type { ChannelChecks, DiagnosticEntry } from '../channels/channel-diagnostics.js'
import { SEVERITIES } from '../channels/channel-diagnostics.js'
import type { CheckTotals } from '../db/schema.js'
import type { CheckCode } from '../templates/template-codes.js'
import { readinessOf } from '../exports/check-totals.js'
import { templateNamed } from '../templates/template-catalog.js'
import type { ConsoleSession } from '../accounts/console-sessions.js'
import { holdBanners, releasedNotice, type HeldChannel } from './hold-banner-views.js'
import { html, type Html } from './html.js'
import { badge, dataTable, when } from './layout.js'
import { productHref } from './product-links.js'
import { fixRuleHref } from './rule-fix-links.js'
import { rulesPath } from './rule-links.js'

// A channel's diagnostics in the console: what its last export found checking the
// products against the channel's template, the counts first, then every failed check of every
// product. Product ids and values are the client's data: they go through `html` like every value.

/** The filters of the list as the form sends them; '' when not set. */
export interface DiagnosticsFilter {
  severity: string
  code: string
  attribute: string
  id: string
}

export interface DiagnosticsPageData {
  checks: ChannelChecks
  filter: DiagnosticsFilter
  entries: DiagnosticEntry[]
  total: number
  offset: number
  perPage: number
  /** A refused filter's message: shown above the list, which is then empty. */
  problem: string | undefined
  session: ConsoleSession
  /** The channel when a safety stop holds it (its banner), and the notice of a release just made. */
  held: HeldChannel | undefined
  released: { id: string; name: string } | undefined
  /** The distinct failing values of the codes a rule would map (rule-fix-links.ts), by code. */
  failing: Record<string, string[]>
}

/** A share from 0 to 1 as a percentage with at most one decimal (66.7 %, 100 %). */
export function percent(share: number): string {
  return `${Number((share * 100).toFixed(1))} %`
}

/** The line the site page shows under each channel: its template and, once exported, its checks. */
export function channelChecksLine(checks: ChannelChecks): Html {
  const template = html`Template <strong>${checks.template}</strong>`
  // The generic template checks nothing: there is nothing to score or to list.
  if (checks.codes.length === 0) return html`<p>${template} <span class="muted">(checks nothing)</span></p>`
  const link = html`<a href="${diagnosticsHref(checks)}">Diagnostics</a>`
  const totals = checks.totals
  if (!totals) return html`<p>${template} · <span class="muted">not checked yet</span> · ${link}</p>`
  const score = readinessOf(totals)
  return html`<p>
    ${template} · readiness ${score === null ? '—' : percent(score)} · ${totals.exported} exported, ${totals.leftOut} left out, ${totals.exportedWithWarnings}
    with warnings · ${link}
  </p>`
}

export function diagnosticsHref(checks: Pick<ChannelChecks, 'siteId' | 'channelId'>, params?: Record<string, string>): string {
  const query = params ? new URLSearchParams(params).toString() : ''
  return `/console/sites/${checks.siteId}/channels/${checks.channelId}/diagnostics${query ? `?${query}` : ''}`
}

export function diagnosticsPage(data: DiagnosticsPageData): Html {
  const banner = data.held ? holdBanners([data.held], 1, data.session, diagnosticsHref(data.checks)) : ''
  return html`${releasedNotice(data.released)} ${banner} ${summarySection(data.checks)} ${codesSection(data.checks, data.failing)} ${listSection(data)}`
}

function summarySection(checks: ChannelChecks): Html {
  const template = templateNamed(checks.template)
  const url = template?.specification.url ?? ''
  const spec = url ? html`<a href="${url}" rel="noreferrer">${template?.title ?? checks.template}</a>` : html`${template?.title ?? checks.template}`
  const run = checks.pid ? html`<a href="/console/sites/${checks.siteId}?pid=${checks.pid}#errors-heading">${checks.pid.slice(0, 8)}</a>` : ''
  const last = checks.pid ? html`Last export ${when(checks.exportedAt)}, run ${run}.` : html`<span class="muted">Not exported yet.</span>`
  return html`<section aria-labelledby="summary-heading">
    <h2 id="summary-heading">Summary</h2>
    <p>Template <strong>${checks.template}</strong> (${spec}) · validation mode <strong>${checks.validationMode}</strong> · ${checks.codes.length} checks</p>
    <p>${last} <a href="${rulesPath(checks.siteId, checks.channelId)}">Rules of this channel</a></p>
    ${checks.totals ? cards(checks.totals, checks.readinessThreshold) : ''}
  </section>`
}

function cards(totals: CheckTotals, threshold: number | null): Html {
  const score = readinessOf(totals)
  const below = score !== null && threshold !== null && score < threshold
  const card = (label: string, value: string | number, note: Html | string = '') =>
    html`<div class="card"><strong>${value}</strong>${label}${note ? html` ${note}` : ''}</div>`
  const vsThreshold =
    threshold === null ? html`<span class="muted">(no threshold)</span>` : html`vs threshold ${percent(threshold)} ${badge(below ? 'below' : 'met')}`
  return html`<div class="cards">
    ${card('readiness', score === null ? '—' : percent(score), vsThreshold)} ${card('checked', totals.checked)} ${card('exported', totals.exported)}
    ${card('left out', totals.leftOut)} ${card('exported with warnings', totals.exportedWithWarnings)} ${card('with errors', totals.withErrors)}
    ${card('with warnings', totals.withWarnings)}
  </div>`
}

function fixLink(checks: ChannelChecks, code: CheckCode, values: string[] | undefined): Html | '' {
  const href = fixRuleHref(checks, code, values)
  return href === undefined ? '' : html`<a href="${href}" aria-label="Fix ${code.code} with a rule">Fix with a rule</a>`
}

function codesSection(checks: ChannelChecks, values: Record<string, string[]>): Html {
  const counts = checks.totals?.codes ?? {}
  const failing = checks.codes.filter((code) => (counts[code.code] ?? 0) > 0)
  const rows = failing.map(
    (code) =>
      html`<tr>
        <td><a href="${diagnosticsHref(checks, { code: code.code })}#list-heading">${code.code}</a></td>
        <td>${badge(code.severity)}</td>
        <td>${code.attribute}</td>
        <td class="num">${counts[code.code] ?? 0}</td>
        <td>${code.message}</td>
        <td>${fixLink(checks, code, values[code.code])}</td>
      </tr>`,
  )
  return html`<section aria-labelledby="codes-heading">
    <h2 id="codes-heading">Failed checks by code</h2>
    ${
      failing.length === 0
        ? html`<p class="muted">No product fails a check.</p>`
        : dataTable(['Code', 'Severity', 'Attribute', '#Products', 'Message', 'Fix'], rows, { describedBy: 'codes-heading' })
    }
  </section>`
}

/**
 * The codes the code filter offers: those the last export's products failed (or were rewritten by),
 * in the template's order, each with its count; a code of the URL the template knows is kept (0).
 */
function codeOptions(checks: ChannelChecks, current: string): [string, string][] {
  const counts = checks.totals?.codes ?? {}
  const offered = checks.codes.filter((code) => (counts[code.code] ?? 0) > 0 || code.code === current)
  return [['', 'any'], ...offered.map((code): [string, string] => [code.code, `${code.code} (${counts[code.code] ?? 0})`])]
}

function filterForm(checks: ChannelChecks, filter: DiagnosticsFilter): Html {
  const option = (value: string, current: string, label = value) =>
    html`<option value="${value}" ${value === current ? html` selected` : ''}>${label || 'any'}</option>`
  return html`<form class="filters" method="get" action="${diagnosticsHref(checks)}#list-heading">
    <div>
      <label for="severity">Severity</label
      ><select id="severity" name="severity">
        ${['', ...SEVERITIES].map((value) => option(value, filter.severity))}
      </select>
    </div>
    <div>
      <label for="code">Code</label
      ><select id="code" name="code">
        ${codeOptions(checks, filter.code).map(([value, label]) => option(value, filter.code, label))}
      </select>
    </div>
    <div><label for="attribute">Attribute</label><input id="attribute" name="attribute" value="${filter.attribute}" /></div>
    <div><label for="id">Product id</label><input id="id" name="id" value="${filter.id}" /></div>
    <div><button type="submit">Filter</button></div>
  </form>`
}

function listSection(data: DiagnosticsPageData): Html {
  const { checks, entries, problem } = data
  const rows = entries.map(
    ({ productId, check, value }) =>
      html`<tr>
        <td><a href="${productHref(checks.siteId, productId)}">${productId}</a></td>
        <td>${check.attribute}</td>
        <td><code>${check.code}</code></td>
        <td>${badge(check.severity)}</td>
        <td>${check.message}</td>
        <td>${value === '' ? html`<span class="muted">(empty)</span>` : html`<code>${value}</code>`}</td>
        <td>${check.hint}</td>
      </tr>`,
  )
  const list =
    entries.length === 0
      ? html`<p class="muted">No failed checks${data.offset > 0 ? ' on this page' : ''}.</p>`
      : dataTable(['Product id', 'Attribute', 'Code', 'Severity', 'Message', 'Value', 'Hint'], rows, { describedBy: 'list-range' })
  return html`<section aria-labelledby="list-heading">
    <h2 id="list-heading">Failed checks per product</h2>
    ${filterForm(checks, data.filter)} ${problem ? html`<p class="error" role="alert">${problem}</p>` : html`${range(data)} ${list} ${pager(data)}`}
  </section>`
}

function range({ entries, total, offset }: DiagnosticsPageData): Html {
  const text = entries.length === 0 ? `0 of ${total}` : `${offset + 1}–${offset + entries.length} of ${total}`
  return html`<p id="list-range" class="muted">${text}</p>`
}

function pager({ checks, filter, entries, total, offset, perPage }: DiagnosticsPageData): Html {
  const href = (next: number) => {
    const params = Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== ''))
    return `${diagnosticsHref(checks, { ...params, offset: String(next) })}#list-heading`
  }
  return html`<div class="pager">
    ${offset > 0 ? html`<a href="${href(Math.max(0, offset - perPage))}">Previous page</a>` : ''}
    ${offset + entries.length < total && entries.length > 0 ? html`<a href="${href(offset + perPage)}">Next page</a>` : ''}
  </div>`
}
