import type { ChannelChecks } from '../channels/channel-diagnostics.js'
import type { ChannelDetails } from '../channels/channels.js'
import type { ChannelExport, DataSource, SourceFetchReport } from '../db/schema.js'
import { feedUrl } from '../feeds/feed-urls.js'
import { html, jsonAttribute, type Html } from './html.js'
import { badge, dataTable, when } from './layout.js'
import { channelChecksLine } from './diagnostics-page-views.js'
import { rulesPath } from './rule-links.js'
import { deliveriesPath } from './delivery-page-views.js'

// The site page's sections on what the site is made of: its data sources, and each shown channel
// with its last export, its checks, its feed files and its export history.

/** A channel the site page shows, with its export history and what its template checked. */
export interface ShownChannel {
  details: ChannelDetails
  history: ChannelExport[]
  checks: ChannelChecks
}

export function sourcesSection(sources: DataSource[]): Html {
  const rows = sources.map(
    (source) =>
      html`<tr>
        <td>#${source.id}</td>
        <td>${source.description}</td>
        <td>${source.import_type === 1 ? 'main' : 'additional'}</td>
        <td>${badge(source.status)}</td>
        <td>${origin(source)}</td>
        <td>${lastFetch(source.last_fetch)}</td>
      </tr>`,
  )
  return html`<section aria-labelledby="sources-heading">
    <h2 id="sources-heading">Data sources</h2>
    ${
      sources.length === 0
        ? html`<p class="muted">
            No data sources: connect a stream, a feed URL or an SFTP file through the platform interface (POST /sites/{siteId}/sources).
          </p>`
        : dataTable(['Id', 'Description', 'Feed', 'Status', 'From', 'Last fetch'], rows)
    }
  </section>`
}

/** Where a source's data comes from; never a credential. */
function origin(source: DataSource): Html {
  const settings = source.settings
  if (source.kind === 'stream' || !settings) return html`<a href="/console/streams/${source.stream_id}">stream #${source.stream_id}</a>`
  if (settings.kind === 'feed_url') return html`${settings.format} from <code>${settings.url}</code>`
  return html`${settings.format} from <code>sftp://${settings.user}@${settings.host}:${settings.port}/${settings.path}</code>`
}

function lastFetch(report: SourceFetchReport | null): Html {
  if (!report) return html`<span class="muted">${'—'}</span>`
  const at = when(new Date(report.started_at))
  if (report.outcome === 'failed') return html`${badge('failed')} ${at}: ${report.error ?? ''}`
  if (report.outcome === 'unchanged') return html`${badge('unchanged')} ${at}`
  const refused = report.errors.map((error) => html`<li>${error.occurrences} × ${error.message} (lines ${error.lines.join(', ')})</li>`)
  return html`${badge('imported')} ${at}: ${report.products ?? 0} products${report.refused_rows ? `, ${report.refused_rows} refused` : ''}
  ${
    refused.length > 0
      ? html`<ul>
          ${refused}
        </ul>`
      : ''
  }`
}

export function channelsSection(channels: ShownChannel[], more: number): Html {
  const items = channels.map(({ details, history, checks }) => {
    const feed = details.destinations.find((destination) => destination.kind === 'feed' && destination.token)
    const links = feed ? details.files.map((file) => html`<li><a href="${feedUrl('', feed.token ?? '', file.filename)}">${file.filename}</a></li>`) : []
    // A held export published nothing: the chart and the last export are the published ones'.
    const published = history.filter((entry) => entry.process_status === 'success')
    const points = [...published].reverse()
    const chart = {
      type: 'bar',
      labels: points.map((entry) => entry.export_time.toISOString().slice(5, 16).replace('T', ' ')),
      datasets: (['new', 'modified', 'deleted', 'unchanged'] as const).map((kind, i) => ({
        label: kind,
        data: points.map((entry) => Number(entry[`product_count_${kind}`])),
        backgroundColor: ['#137333', '#0b5cad', '#b42318', '#9aa6b4'][i],
      })),
    }
    return html`<article aria-labelledby="channel-${details.channel.id}">
      <h3 id="channel-${details.channel.id}">
        ${details.channel.name}
        <span class="muted">#${details.channel.id} · ${details.channel.format} · ${details.channel.export_name}</span>
        ${badge(details.channel.active ? 'active' : 'inactive')} ${badge(details.exportStatus === 'not_exported' ? 'not exported' : details.exportStatus)}
      </h3>
      ${lastExport(published[0])} ${heldExport(history[0])} ${channelChecksLine(checks)}
      ${
        links.length > 0
          ? html`<p>Feed files:</p>
              <ul>
                ${links}
              </ul>`
          : ''
      }
      ${points.length > 0 ? historyChart(details.channel.name, chart) : ''}
      <p>
        <a href="/console/sites/${details.channel.site_id}/products?stage=channel&amp;channel=${details.channel.id}">Browse this channel's products</a> ·
        <a href="${rulesPath(details.channel.site_id, details.channel.id)}" aria-label="Rules of ${details.channel.name}">Rules of this channel</a> ·
        <a href="${deliveriesPath(details.channel.site_id, details.channel.id)}" aria-label="Destinations and deliveries of ${details.channel.name}"
          >Destinations and deliveries</a
        >
      </p>
    </article>`
  })
  return html`<section aria-labelledby="channels-heading" data-live-section="channels">
    <h2 id="channels-heading">Channels</h2>
    ${channels.length === 0 ? html`<p class="muted">No channels.</p>` : items}
    ${more > 0 ? html`<p class="muted">And ${more} more channels: the platform interface lists them all (GET /sites/{siteId}/channels).</p>` : ''}
  </section>`
}

function lastExport(last: ChannelExport | undefined): Html {
  if (!last) return html`<p class="muted">Not exported yet.</p>`
  const counts =
    `${last.product_count_new} new, ${last.product_count_modified} modified, ` +
    `${last.product_count_deleted} deleted, ${last.product_count_unchanged} unchanged`
  return html`<p>Last export ${when(last.export_time)}: ${last.product_count_now} products — ${counts}.</p>`
}

/** The latest export when a safety stop held it: what it would have published. */
function heldExport(latest: ChannelExport | undefined): Html {
  if (latest?.process_status !== 'held') return html``
  return html`<p>
    Held export ${when(latest.export_time)}: ${latest.product_count_now} products (${latest.product_count_deleted} deleted, ${latest.product_count_skipped} left
    out), not published.
  </p>`
}

function historyChart(name: string, chart: unknown): Html {
  return html`<div class="chart"><canvas role="img" aria-label="Export history of ${name}" data-chart="${jsonAttribute(chart)}"></canvas></div>`
}
