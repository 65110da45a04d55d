import { ACTOR_TYPES } from '../activity/activity-query.js'
import type { ActivityEntry } from '../activity/activity-store.js'
import { html, type Html } from './html.js'
import { dataTable, when } from './layout.js'

// The activity pages (activity-page-routes.ts): an account's changes, one site's, or every account's
// for the operator; newest first, filtered and paged on the server.

/** A change's value is cut after this many characters: a rule's whole list of conditions can be long. */
const VALUE_SHOWN = 300

/** The filters as the form and the links carry them: the query's text, as it came. */
export interface ActivityQuery {
  action: string
  actor: string
  target_type: string
  target_id: string
  since: string
  until: string
  limit: string
  /** The operator's page only: one account's entries. */
  account: string
}

export const ACTIVITY_QUERY_FIELDS = ['action', 'actor', 'target_type', 'target_id', 'since', 'until', 'limit', 'account'] as const

export interface ActivityPageData {
  /** Where the form and the links go: /console/activity, a site's, the operator's. */
  path: string
  query: ActivityQuery
  /** Whether the query named a page below the first. */
  paged: boolean
  entries: ActivityEntry[]
  nextCursor: string | null
  /** A wrong filter's message (`since: "x" is not an ISO 8601 date or time…`): shown in place of the entries. */
  error: string | undefined
  /** The operator's view: an account column and filter, and no links to an account's site pages. */
  operator: boolean
}

export function activityPage(data: ActivityPageData): Html {
  return html`<section aria-labelledby="activity-heading">
    <h2 id="activity-heading">Changes, newest first</h2>
    ${filterForm(data)} ${data.error === undefined ? entriesList(data) : html`<p class="error" role="alert" id="activity-error">${data.error}</p>`}
  </section>`
}

/** The field a filter's message names (`until: …`), so that the form marks it. */
function fieldInError(error: string | undefined): string {
  return error === undefined ? '' : (/^([a-z_]+):/.exec(error)?.[1] ?? '')
}

function filterForm({ path, query, error, operator }: ActivityPageData): Html {
  const invalid = fieldInError(error)
  const field = (name: keyof ActivityQuery, label: string, extra: Html | string = '') =>
    html`<div>
      <label for="activity-${name}">${label}</label><input id="activity-${name}" name="${name}" value="${query[name]}" ${extra} ${invalidMark(name, invalid)} />
    </div>`
  const option = (value: string) => html`<option value="${value}" ${value === query.actor ? html` selected` : ''}>${value || 'any'}</option>`
  return html`<form class="filters" method="get" action="${path}">
    ${operator ? field('account', 'Account id', html`inputmode="numeric" size="10"`) : ''}
    ${field('action', 'Action', html`placeholder="site.updated or rule.*" size="22"`)}
    <div>
      <label for="activity-actor">Actor type</label
      ><select id="activity-actor" name="actor" ${invalidMark('actor', invalid)}>
        ${['', ...ACTOR_TYPES].map(option)} ${query.actor && !(ACTOR_TYPES as readonly string[]).includes(query.actor) ? option(query.actor) : ''}
      </select>
    </div>
    ${field('target_type', 'Target type', html`placeholder="site, channel, rule…" size="14"`)} ${field('target_id', 'Target id', html`size="12"`)}
    ${field('since', 'Since (UTC)', html`placeholder="2026-11-27T08:00:00Z" size="22"`)}
    ${field('until', 'Until (UTC)', html`placeholder="2026-11-28" size="22"`)}
    ${query.limit && invalid !== 'limit' ? html`<input type="hidden" name="limit" value="${query.limit}" />` : ''}
    <div><button type="submit">Filter</button></div>
    <div><a href="${path}">All changes</a></div>
  </form>`
}

function invalidMark(name: string, invalid: string): Html {
  return name === invalid ? html`aria-invalid="true" aria-describedby="activity-error"` : html``
}

/** A link to this list with the same filters, at `cursor` (the first page without one). */
function listHref(path: string, query: ActivityQuery, cursor?: string): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) if (value !== '') params.set(name, value)
  if (cursor !== undefined) params.set('cursor', cursor)
  const text = params.toString()
  return text === '' ? path : `${path}?${text}`
}

function entriesList(data: ActivityPageData): Html {
  const { entries, nextCursor, path, query, paged, operator } = data
  const filtered = ACTIVITY_QUERY_FIELDS.some((name) => name !== 'limit' && query[name] !== '')
  if (entries.length === 0) {
    return html`<p class="muted">${paged ? 'No older changes.' : filtered ? 'No change matches these filters.' : 'No changes recorded yet.'}</p>
      ${paged ? html`<div class="pager"><a href="${listHref(path, query)}">Newest entries</a></div>` : ''}`
  }
  const names = [...(operator ? ['Account'] : []), 'Time (UTC)', 'Actor', 'Action', 'Target', 'Request', 'Changes']
  const pager = html`<div class="pager">
    ${paged ? html`<a href="${listHref(path, query)}">Newest entries</a>` : ''}
    ${nextCursor ? html`<a href="${listHref(path, query, nextCursor)}" rel="next">Older entries</a>` : ''}
  </div>`
  return html`${dataTable(
    names,
    entries.map((entry) => entryRow(entry, data)),
    { describedBy: 'activity-heading' },
  )}
  ${pager}`
}

function entryRow(entry: ActivityEntry, { operator, path, query }: ActivityPageData): Html {
  const accountCell = html`<td><a href="${listHref(path, { ...query, account: entry.accountId })}">#${entry.accountId}</a></td>`
  return html`<tr id="activity-${entry.id}" class="activity-entry">
    ${operator ? accountCell : ''}
    <td>${when(entry.occurredAt)}</td>
    <td>${entry.actor.label} <span class="muted" data-field="actor-type">(${entry.actor.type})</span></td>
    <td><code data-field="action">${entry.action}</code></td>
    <td>${target(entry, !operator)}</td>
    <td>${requestCell(entry.request)}</td>
    <td>${changesTable(entry.changes)}</td>
  </tr>`
}

/** What was changed; an account's pages link its site (the operator's page has no account's site pages). */
function target({ target }: ActivityEntry, siteLinks: boolean): Html {
  const named = `${target.type} #${target.id}`
  if (target.siteId === null) return html`${named}`
  const href = `/console/sites/${target.siteId}`
  if (target.type === 'site') return siteLinks ? html`<a href="${href}">${named}</a>` : html`${named}`
  const site = siteLinks ? html`<a href="${href}">site #${target.siteId}</a>` : html`site #${target.siteId}`
  return html`${named}<br /><span class="muted">of</span> ${site}`
}

function requestCell(request: ActivityEntry['request']): Html {
  if (request === null) return html`<span class="muted">none (CLI or the platform itself)</span>`
  const key = request.idempotencyKey
  return html`<code data-field="request-id">${request.id}</code>
    ${key === null ? '' : html`<br /><span class="muted">Idempotency-Key</span> <code data-field="idempotency-key">${key}</code>`}`
}

function changesTable(changes: ActivityEntry['changes']): Html {
  const fields = Object.entries(changes)
  if (fields.length === 0) return html`<span class="muted">—</span>`
  const rows = fields.map(([field, change]) =>
    change === 'changed'
      ? html`<tr>
          <th scope="row">${field}</th>
          <td colspan="2" class="muted">changed (secret, not shown)</td>
        </tr>`
      : html`<tr>
          <th scope="row">${field}</th>
          <td>${shownValue(change[0])}</td>
          <td>${shownValue(change[1])}</td>
        </tr>`,
  )
  return dataTable(['Field', 'Before', 'After'], rows, { className: 'changes' })
}

/** A value as JSON text, cut with an ellipsis when long (at a character, never inside one). */
function shownValue(value: unknown): Html {
  if (value === null || value === undefined) return html`<span class="muted">none</span>`
  if (value === '') return html`<span class="muted">empty</span>`
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  const characters = Array.from(text)
  if (characters.length <= VALUE_SHOWN) return html`<code>${text}</code>`
  return html`<code title="${characters.length} characters, cut">${characters.slice(0, VALUE_SHOWN).join('')}…</code>`
}
