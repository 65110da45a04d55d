import type { FastifyPluginAsync } from 'fastify'
import { siteSummaries, type SiteSummary } from '../sites/site-overview.js'
import { ROW_COUNT_BOUND, streamSummaries, type StreamSummary } from '../streams/stream-overview.js'
import type { ConsoleDeps } from './deps.js'
import { html, type Html } from './html.js'
import { badge, duration, headings, page, when } from './layout.js'
import { accountOfSession, sendPage } from './pages.js'

export const overviewRoutes: FastifyPluginAsync<ConsoleDeps> = async (app, { db }) => {
  app.get('/console', { schema: { hide: true } }, async (request, reply) => {
    const accountId = accountOfSession(request)
    const [sites, streams] = await Promise.all([siteSummaries(db, accountId), streamSummaries(db, accountId)])
    const body = html`<section aria-labelledby="sites-heading">
        <h2 id="sites-heading">Sites</h2>
        ${sitesTable(sites)}
      </section>
      <section aria-labelledby="streams-heading">
        <h2 id="streams-heading">Streams</h2>
        ${streamsTable(streams)}
      </section>`
    return sendPage(reply, page({ title: 'Overview', session: request.consoleSession, body }))
  })
}

function sitesTable(sites: SiteSummary[]): Html {
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
  return html`<table>
    <caption class="muted">
      Last run and its site errors per site
    </caption>
    <thead>
      ${headings(['Project', 'Site', 'Status', 'Processing', 'Last run', '#Products', 'Errors of the last run'])}
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`
}

function lastRun(site: SiteSummary): Html {
  const run = site.lastRun
  if (!run) return html`<span class="muted">never run</span>`
  return html`${run.action} ${badge(run.status)}<br /><span class="muted">${when(run.created_at)} · ${duration(run.started_at, run.finished_at)}</span>`
}

function errorCounts(errors: SiteSummary['errors']): Html {
  const parts = (['high', 'medium', 'low'] as const).filter((level) => errors[level] > 0).map((level) => html`${badge(level)} ${errors[level]} `)
  return parts.length > 0 ? html`${parts}` : html`<span class="muted">none</span>`
}

function streamsTable(streams: StreamSummary[]): Html {
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
  return html`<table>
    <thead>
      ${headings(['Stream', 'Type', 'Status', '#Rows', 'Last batch'])}
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`
}

function lastBatch(stream: StreamSummary): Html {
  const batch = stream.lastBatch
  if (!batch) return html`<span class="muted">no batch</span>`
  return html`${badge(batch.status)} ${batch.rowCount} rows, ${batch.errorCount} errors<br /><span class="muted">${when(batch.createdAt)}</span>`
}
