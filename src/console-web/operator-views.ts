import type { ConsoleSession } from '../accounts/console-sessions.js'
import type { AccountObjects, ChannelAttention, OperatorOverview, StreamState } from '../accounts/operator-overview.js'
import type { Bounded } from '../db/bounded-list.js'
import type { ActiveRun, SiteRunStats } from '../runs/operator-runs.js'
import type { StreamStatus } from '../db/schema.js'
import { html, type Html } from './html.js'
import { badge, csrfField, dataTable, duration, when } from './layout.js'
import { holdFigures } from './hold-banner-views.js'

// The operator's page (operator-routes.ts) and its sections.

/** The operator page's body: what operatorOverview read, this process's capacity, and the stream an operator just switched. */
export function operatorPage(
  overview: OperatorOverview,
  view: { now: Date; health: Record<string, unknown>; session: ConsoleSession; streamAccount: string; changed: string },
): Html {
  const { accounts, runs, failing, slowest, streams, channels } = overview
  const changedStream = view.changed ? streams.rows.find((stream) => stream.id === view.changed) : undefined
  const notice = changedStream
    ? html`<p class="live" role="status">Stream #${changedStream.id} (${changedStream.name}) is now ${changedStream.status}.</p>`
    : ''
  const activity = html`<p><a href="/console/operator/activity">Activity of every account</a>: who changed what, and when.</p>`
  return html`${notice} ${activity} ${healthSection(view.health)} ${accountsSection(accounts)} ${runsSection(runs, view.now)} ${attentionSection(channels)}
  ${siteStatsSection('failing', 'Failing sites of the last 24 hours', failing)} ${siteStatsSection('slowest', 'Slowest sites of the last 24 hours', slowest)}
  ${streamsSection(streams, view.session, view.streamAccount)}`
}

/** The switches the operator page offers for a stream, as `streams set-status` of the CLI sets them. */
const STREAM_SWITCHES: [StreamStatus, string][] = [
  ['active', 'Activate'],
  ['locked_upload', 'Lock upload'],
  ['locked', 'Lock'],
  ['disabled', 'Disable'],
]

function cutNote(list: Bounded<unknown>, what: string): Html {
  return list.cut ? html`<p class="muted" role="note">Only the first ${list.rows.length} ${what} are shown; there are more.</p>` : html``
}

// What a switch does to the stream's owner, said before an operator confirms it.
const SWITCH_EFFECTS: Record<string, string> = {
  locked_upload: 'Its uploads are refused (423) until it is active again; imports go on.',
  locked: 'Its uploads are refused (423), and imports take its current data but not its new batches, until it is active again.',
  disabled: 'Its uploads are refused (403) until it is active again.',
}

/** An account, linked to its activity. */
function account(name: string, id: string): Html {
  return html`<a href="/console/operator/activity?account=${id}">${name}</a> <span class="muted">#${id}</span>`
}

/** A site, linked to its activity (in its account's). */
function site(title: string, id: string, accountId: string): Html {
  return html`<a href="/console/operator/activity?account=${accountId}&amp;target_type=site&amp;target_id=${id}">${title}</a> <span class="muted">#${id}</span>`
}

/** Usage figures of this process (slots, spool, database pool), one card per kind. */
function healthSection(health: Record<string, unknown>): Html {
  const cards = Object.entries(health).map(([name, value]) => {
    const figures = value && typeof value === 'object' ? Object.entries(value as Record<string, unknown>) : [['value', value] as [string, unknown]]
    const items = figures.map(([key, figure]) => html`<li>${key}: ${String(figure)}</li>`)
    return html`<div class="card">
      <h3>${name}</h3>
      <ul>
        ${items}
      </ul>
    </div>`
  })
  return html`<section aria-labelledby="health-heading">
    <h2 id="health-heading">This process</h2>
    <div class="cards">${cards}</div>
  </section>`
}

function accountsSection(accounts: Bounded<AccountObjects>): Html {
  const rows = accounts.rows.map(
    (a) =>
      html`<tr>
        <td>${account(a.name, a.id)}</td>
        <td>${when(a.createdAt)}</td>
        <td class="num">${a.projects}</td>
        <td class="num">${a.sites}</td>
        <td class="num">${a.streams}</td>
        <td class="num">${a.channels}</td>
        <td class="num">${a.webhooks}</td>
      </tr>`,
  )
  return html`<section aria-labelledby="accounts-heading">
    <h2 id="accounts-heading">Accounts</h2>
    ${
      accounts.rows.length === 0
        ? html`<p class="muted">No accounts yet: create one with <code>npx catalog-platform accounts create</code>.</p>`
        : dataTable(['Account', 'Created', '#Projects', '#Sites', '#Streams', '#Channels', '#Webhooks'], rows)
    }
    ${cutNote(accounts, 'accounts')}
  </section>`
}

/** Time since `start`; never below zero when this process's clock is behind the database's. */
function elapsed(start: Date, now: Date): string {
  return duration(start, now < start ? start : now)
}

const RUN_HEADERS = ['Account', 'Site', 'Action', 'Status', 'Queued', 'Started', 'Elapsed', 'Run']

function runsSection(runs: Bounded<ActiveRun>, now: Date): Html {
  const rows = runs.rows.map(
    (run) =>
      html`<tr>
        <td>${account(run.accountName, run.accountId)}</td>
        <td>${site(run.siteTitle, run.siteId, run.accountId)}</td>
        <td>${run.action} <span class="muted">(${run.trigger})</span></td>
        <td>${badge(run.status)}</td>
        <td>${when(run.createdAt)}</td>
        <td>${when(run.startedAt)}</td>
        <td>${run.startedAt ? elapsed(run.startedAt, now) : html`waiting ${elapsed(run.createdAt, now)}`}</td>
        <td><code>${run.pid}</code></td>
      </tr>`,
  )
  return html`<section aria-labelledby="runs-heading">
    <h2 id="runs-heading">Runs queued and running</h2>
    ${runs.rows.length === 0 ? html`<p class="muted">No run is queued or running.</p>` : dataTable(RUN_HEADERS, rows)} ${cutNote(runs, 'runs')}
  </section>`
}

function siteStatsSection(id: string, title: string, sites: Bounded<SiteRunStats>): Html {
  const seconds = (value: number | null) => (value === null ? '—' : duration(new Date(0), new Date(value * 1000)))
  const rows = sites.rows.map(
    (row) =>
      html`<tr>
        <td>${account(row.accountName, row.accountId)}</td>
        <td>${site(row.siteTitle, row.siteId, row.accountId)}</td>
        <td class="num">${row.runs}</td>
        <td class="num">${row.failed}</td>
        <td class="num">${seconds(row.slowestSeconds)}</td>
        <td>${row.lastFailure ?? '—'}</td>
      </tr>`,
  )
  return html`<section aria-labelledby="${id}-heading">
    <h2 id="${id}-heading">${title}</h2>
    ${sites.rows.length === 0 ? html`<p class="muted">None.</p>` : dataTable(['Account', 'Site', '#Runs', '#Failed', '#Slowest run', 'Latest failure'], rows)}
    ${cutNote(sites, 'sites')}
  </section>`
}

const share = (value: number | null) => (value === null ? '—' : `${Number((value * 100).toFixed(1))} %`)

/** Channels of every account held by a safety stop or below their readiness threshold. */
function attentionSection(channels: Bounded<ChannelAttention>): Html {
  const rows = channels.rows.map(
    (c) =>
      html`<tr id="attention-${c.channelId}">
        <td>${account(c.accountName, c.accountId)}</td>
        <td>${site(c.siteTitle, c.siteId, c.accountId)}</td>
        <td>${c.channelName} <span class="muted">#${c.channelId}</span></td>
        <td class="num">${share(c.readiness)}</td>
        <td class="num">${share(c.threshold)}</td>
        <td>${c.hold ? html`${badge('held')} ${c.hold.reason}: ${holdFigures(c.hold)}` : badge('below')}</td>
        <td>${c.hold ? when(new Date(c.hold.held_at)) : html`checked ${when(c.checkedAt)}`}</td>
      </tr>`,
  )
  return html`<section aria-labelledby="attention-heading">
    <h2 id="attention-heading">Channels held or below their readiness threshold</h2>
    ${
      channels.rows.length === 0
        ? html`<p class="muted">No channel is held or below its threshold.</p>`
        : dataTable(['Account', 'Site', 'Channel', '#Readiness', '#Threshold', 'Hold or readiness', 'Since'], rows)
    }
    ${cutNote(channels, 'channels (held ones first, the longest held first)')}
  </section>`
}

function streamsSection(
  streams: Bounded<StreamState> & { byStatus: Partial<Record<StreamStatus, number>> },
  session: ConsoleSession,
  accountFilter: string,
): Html {
  const counts = Object.entries(streams.byStatus).map(([status, n]) => html`${badge(status)} ${n} `)
  const rows = streams.rows.map((stream) => {
    const buttons = STREAM_SWITCHES.filter(([status]) => status !== stream.status).map(
      ([status, label]) =>
        html`<button
          type="submit"
          name="status"
          value="${status}"
          class="secondary"
          aria-label="${label} stream #${stream.id}"
          data-confirm="${status === 'active' ? '' : `${label} stream #${stream.id} of account #${stream.accountId}? ${SWITCH_EFFECTS[status]}`}"
        >
          ${label}
        </button> `,
    )
    return html`<tr id="stream-${stream.id}">
      <td>${stream.name} <span class="muted">#${stream.id} · ${stream.type}</span></td>
      <td>${account(stream.accountName, stream.accountId)}</td>
      <td>${badge(stream.status)}</td>
      <td>${when(stream.updatedAt)}</td>
      <td>
        <form class="inline" method="post" action="/console/operator/streams/${stream.id}/status">
          ${csrfField(session)} ${accountFilter ? html`<input type="hidden" name="account" value="${accountFilter}" />` : ''} ${buttons}
        </form>
      </td>
    </tr>`
  })
  return html`<section aria-labelledby="streams-heading">
    <h2 id="streams-heading">Streams</h2>
    <p>${counts.length > 0 ? counts : html`<span class="muted">No streams.</span>`}</p>
    <form class="filters" method="get" action="/console/operator#streams-heading">
      <div>
        <label for="stream-account">Account id</label><input id="stream-account" name="account" value="${accountFilter}" inputmode="numeric" size="10" />
      </div>
      <div><button type="submit">Show its streams</button></div>
      ${accountFilter ? html`<div><a href="/console/operator#streams-heading">All accounts</a></div>` : ''}
    </form>
    ${streams.rows.length === 0 ? '' : dataTable(['Stream', 'Account', 'Status', 'Changed', 'Set status'], rows)}
    ${cutNote(streams, 'streams (those not active first)')}
  </section>`
}
