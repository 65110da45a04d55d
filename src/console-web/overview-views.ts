import type { ChannelState, ChannelStates } from '../channels/channel-states.js'
import { readinessOf } from '../exports/check-totals.js'
import type { SiteSummary } from '../sites/site-overview.js'
import { ROW_COUNT_BOUND, type StreamSummary } from '../streams/stream-overview.js'
import { GENERIC_TEMPLATE } from '../templates/template-catalog.js'
import { percent } from './diagnostics-page-views.js'
import type { ConsoleSession } from '../accounts/console-sessions.js'
import type { AccountOverview } from '../channels/account-overview.js'
import { diagnosticsPath, heldChannelOf, holdBanners, releasedNotice } from './hold-banner-views.js'
import { html, type Html } from './html.js'
import { badge, dataTable, duration, when } from './layout.js'

// The overview's tables: every site with its last run, the account's channels (bounded) with their
// readiness and whether a safety stop holds them, every stream with its last batch.

/** The overview page's body: banners of held channels (and of one just released), then the three tables. */
export function overviewPage({ sites, channels, streams }: AccountOverview, { session, released }: { session: ConsoleSession; released: string }): Html {
  const held = channels.rows.flatMap((c) => heldChannelOf({ id: c.siteId, title: c.siteTitle }, { id: c.channelId, name: c.name, hold: c.hold }) ?? [])
  const releasedChannel = channels.rows.find((c) => c.channelId === released)
  return html`${releasedNotice(releasedChannel && { id: releasedChannel.channelId, name: releasedChannel.name })}
    ${holdBanners(held, channels.held, session, '/console')}
    <section aria-labelledby="sites-heading">
      <h2 id="sites-heading">Sites</h2>
      ${sitesTable(sites)}
    </section>
    <section aria-labelledby="channels-heading">
      <h2 id="channels-heading">Channels</h2>
      ${channelsTable(channels)}
    </section>
    <section aria-labelledby="streams-heading">
      <h2 id="streams-heading">Streams</h2>
      ${streamsTable(streams)}
    </section>`
}

export function sitesTable(sites: SiteSummary[]): Html {
  if (sites.length === 0) return html`<p class="muted">No sites yet: create a project and a site through the platform interface.</p>`
  const rows = sites.map(
    (site) =>
      html`<tr>
        <td>${site.projectName}</td>
        <td><a href="/console/sites/${site.id}">${site.title}</a> <span class="muted">#${site.id}</span></td>
        <td>${badge(site.status)}</td>
        <td>${badge(site.processingStatus)}</td>
        <td>${lastRun(site)}</td>
        <td class="num">${site.productCount ?? '—'}</td>
        <td>${errorCounts(site.errors)}</td>
      </tr>`,
  )
  return dataTable(['Project', 'Site', 'Status', 'Processing', 'Last run', '#Products', 'Errors of the last run'], rows, {
    caption: 'Last run and its site errors per site',
  })
}

function lastRun(site: SiteSummary): Html {
  const run = site.lastRun
  if (!run) return html`<span class="muted">never run</span>`
  return html`${run.action} ${badge(run.shownStatus)}<br /><span class="muted">${when(run.created_at)} · ${duration(run.started_at, run.finished_at)}</span>`
}

function errorCounts(errors: SiteSummary['errors']): Html {
  const parts = (['high', 'medium', 'low'] as const).filter((level) => errors[level] > 0).map((level) => html`${badge(level)} ${errors[level]} `)
  return parts.length > 0 ? html`${parts}` : html`<span class="muted">none</span>`
}

/** Readiness against the channel's threshold: "66.7 % below 80 %". */
function readiness(channel: ChannelState): Html {
  if (channel.template === GENERIC_TEMPLATE.name) return html`<span class="muted">checks nothing</span>`
  const score = channel.totals ? readinessOf(channel.totals) : null
  if (score === null) return html`<span class="muted">not checked yet</span>`
  const threshold = channel.readinessThreshold
  if (threshold === null) return html`${percent(score)}`
  return html`${percent(score)} ${badge(score < threshold ? 'below' : 'met')} <span class="muted">threshold ${percent(threshold)}</span>`
}

export function channelsTable(channels: ChannelStates): Html {
  if (channels.rows.length === 0) return html`<p class="muted">No channels yet: create one through the platform interface.</p>`
  const rows = channels.rows.map(
    (channel) =>
      html`<tr id="channel-state-${channel.channelId}">
        <td>${channel.siteTitle} <span class="muted">#${channel.siteId}</span></td>
        <td>
          <a href="/console/sites/${channel.siteId}#channel-${channel.channelId}">${channel.name}</a> <span class="muted">#${channel.channelId}</span>
          ${channel.active ? '' : badge('inactive')}
        </td>
        <td>${channel.template}</td>
        <td>${readiness(channel)}</td>
        <td>${badge(channel.exportStatus === 'not_exported' ? 'not exported' : channel.exportStatus)}</td>
        <td class="num">${channel.totals?.exported ?? '—'}</td>
        <td><a href="${diagnosticsPath(channel.siteId, channel.channelId)}">Diagnostics</a></td>
      </tr>`,
  )
  const caption = 'Held channels first, then those below their readiness threshold'
  return html`${dataTable(['Site', 'Channel', 'Template', 'Readiness', 'Export', '#In the feed', 'Checks'], rows, { caption })}
  ${channels.cut ? html`<p class="muted" role="note">Only the first ${channels.rows.length} channels are shown; each site's page lists its own.</p>` : ''}`
}

export function streamsTable(streams: StreamSummary[]): Html {
  if (streams.length === 0) return html`<p class="muted">No streams yet: create one through the stream interface (POST /streams).</p>`
  const rows = streams.map(
    (stream) =>
      html`<tr>
        <td><a href="/console/streams/${stream.id}">${stream.name}</a> <span class="muted">#${stream.id}</span></td>
        <td>${stream.type}</td>
        <td>${badge(stream.status)}</td>
        <td class="num">${stream.rowCount > ROW_COUNT_BOUND ? `over ${ROW_COUNT_BOUND}` : stream.rowCount}</td>
        <td>${lastBatch(stream)}</td>
      </tr>`,
  )
  return dataTable(['Stream', 'Type', 'Status', '#Rows', 'Last batch'], rows)
}

function lastBatch(stream: StreamSummary): Html {
  const batch = stream.lastBatch
  if (!batch) return html`<span class="muted">no batch</span>`
  return html`${badge(batch.status)} ${batch.rowCount} rows, ${batch.errorCount} errors<br /><span class="muted">${when(batch.createdAt)}</span>`
}
