import type { ConsoleSession } from '../accounts/console-sessions.js'
import type { DataSource, ImportHistory, Site, SiteError } from '../db/schema.js'
import { html, jsonAttribute, type Html } from './html.js'
import { badge, badgeClass, csrfField, dataTable, duration, when } from './layout.js'
import { holdBanners, releasedNotice, type HeldChannel } from './hold-banner-views.js'
import { channelsSection, sourcesSection, type ShownChannel } from './site-sources-views.js'

export interface ErrorFilter {
  pid: string
  type: string
  classification: string
}

export interface SiteRun {
  pid: string
  action: string
  target_id: string | null
  trigger: string
  status: string
  /** The status as the console shows it: success with warnings when its exports left products out or were held. */
  shown_status: string
  message: string
  attempt: number
  created_at: Date
  started_at: Date | null
  finished_at: Date | null
  error_count: string | null
  imported: string | null
  exported: string | null
}

export interface SitePageData {
  site: Site
  session: ConsoleSession
  runs: SiteRun[]
  runsOffset: number
  runsPerPage: number
  recentRuns: SiteRun[]
  imports: ImportHistory[]
  errors: SiteError[]
  errorFilter: ErrorFilter
  sources: DataSource[]
  /** Each shown channel with its export history and what its template checked. */
  channels: ShownChannel[]
  /** Channels of the site beyond those shown. */
  moreChannels: number
  /** The site's held channels (their banners), and the channel a release just published. */
  held: HeldChannel[]
  released: { id: string; name: string } | undefined
  livePid: string
  /** When the page was made: a running run's time so far. */
  now: Date
}

export function sitePage(data: SitePageData): Html {
  const { site } = data
  return html`<p data-live-section="site-status">
      ${badge(site.status)} ${badge(site.processing_status)} <span class="muted">site #${site.id} · project #${site.project_id}</span> ·
      <a href="/console/sites/${site.id}/products">Browse products</a> · <a href="/console/sites/${site.id}/rules">Rules of the site</a> ·
      <a href="/console/sites/${site.id}/activity">Activity of the site</a>
    </p>
    ${releasedNotice(data.released)} ${holdBanners(data.held, data.held.length, data.session, `/console/sites/${site.id}`)}
    ${data.livePid ? liveRun(site.id, data.livePid, data.recentRuns, data.now) : ''} ${actions(data)} ${charts(data)} ${runsSection(data)}
    ${errorsSection(data)} ${sourcesSection(data.sources)} ${channelsSection(data.channels, data.moreChannels)}`
}

/** Where a run is, in words: waiting, running for so long, or how long it took. */
export function runPhase(run: Pick<SiteRun, 'status' | 'started_at' | 'finished_at'>, now: Date): string {
  const end = run.finished_at ?? now
  const seconds = run.started_at ? Math.max(0, (end.getTime() - run.started_at.getTime()) / 1000) : 0
  if (run.status === 'queued') return 'waiting for a run slot'
  return run.status === 'running' ? `running for ${seconds.toFixed(0)} s` : `took ${seconds.toFixed(1)} s`
}

/**
 * The watched run's status box, as the page was made (console.js polls it on): a run that had ended
 * then needs no refresh of the page's sections, and without JavaScript the box still says where the
 * run was, its message, and links to the page that shows its results.
 */
function liveRun(siteId: string, pid: string, runs: SiteRun[], now: Date): Html {
  const run = runs.find((candidate) => candidate.pid === pid)
  const status = run?.shown_status ?? 'queued'
  const ended = run?.status === 'success' || run?.status === 'failed'
  return html`<div class="live" role="status" aria-live="polite" data-poll="/console/sites/${siteId}/runs/${pid}/status" ${ended ? html`data-shown-ended` : ''}>
    Run <code>${pid}</code>: <strong data-field="status" class="badge ${badgeClass(status)}">${status}</strong> ·
    <span data-field="elapsed">${run ? runPhase(run, now) : ''}</span> · <span data-field="message">${run?.message ?? ''}</span>
    <a data-field="refresh" href="/console/sites/${siteId}?pid=${pid}" ${ended ? '' : html`hidden`}>Show its results</a>
  </div>`
}

function actions({ site, session }: SitePageData): Html {
  const paused = site.status === 'paused_upload'
  return html`<section aria-labelledby="actions-heading">
    <h2 id="actions-heading">Actions</h2>
    <form class="inline" method="post" action="/console/sites/${site.id}/runs">
      ${csrfField(session)}
      <label for="action">Start a run</label>
      <select id="action" name="action">
        <option value="import">import</option>
        <option value="export-all">export-all</option>
        <option value="all">all (import, then export)</option>
      </select>
      <button type="submit">Start</button>
    </form>
    ${
      site.status === 'disabled'
        ? html`<span class="muted">The site is disabled: it runs nothing.</span>`
        : html`<form class="inline" method="post" action="/console/sites/${site.id}/status">
            ${csrfField(session)}
            <input type="hidden" name="status" value="${paused ? 'active' : 'paused_upload'}" />
            <button type="submit" class="secondary">${paused ? 'Resume exports' : 'Pause exports'}</button>
          </form>`
    }
  </section>`
}

function charts({ imports, recentRuns }: SitePageData): Html {
  const importPoints = [...imports].reverse()
  const importChart = {
    labels: importPoints.map((entry) => entry.import_time.toISOString().slice(0, 16).replace('T', ' ')),
    datasets: [{ label: 'products', data: importPoints.map((entry) => Number(entry.product_count)), borderColor: '#0b5cad' }],
    unit: 'products',
  }
  const ended = [...recentRuns].reverse().filter((run) => run.started_at && run.finished_at)
  const runChart = {
    type: 'bar',
    labels: ended.map((run) => `${run.action} ${run.created_at.toISOString().slice(5, 16).replace('T', ' ')}`),
    datasets: [{ label: 'seconds', data: ended.map((run) => (run.finished_at!.getTime() - run.started_at!.getTime()) / 1000), backgroundColor: '#7fb0e6' }],
    unit: 'seconds',
  }
  return html`<section aria-labelledby="charts-heading" data-live-section="charts">
    <h2 id="charts-heading">History</h2>
    <div class="charts">
      <figure>
        <figcaption>Products per import (${importPoints.length} latest)</figcaption>
        <div class="chart">
          <canvas
            role="img"
            aria-label="Products per import: ${importPoints.map((p) => p.product_count).join(', ')}"
            data-chart="${jsonAttribute(importChart)}"
          ></canvas>
        </div>
      </figure>
      <figure>
        <figcaption>Run durations (${ended.length} latest)</figcaption>
        <div class="chart"><canvas role="img" aria-label="Run durations in seconds" data-chart="${jsonAttribute(runChart)}"></canvas></div>
      </figure>
    </div>
  </section>`
}

function runCounts(run: SiteRun): string {
  const parts = [run.imported !== null ? `${run.imported} imported` : '', run.exported !== null ? `${run.exported} exported` : '']
  return parts.filter((part) => part !== '').join(', ') || '—'
}

function runsSection({ site, runs, runsOffset, runsPerPage }: SitePageData): Html {
  const rows = runs.map(
    (run) =>
      html`<tr>
        <td><a href="/console/sites/${site.id}?pid=${run.pid}#errors-heading">${run.pid.slice(0, 8)}</a></td>
        <td>${run.action}${run.target_id ? ` #${run.target_id}` : ''}</td>
        <td>${badge(run.shown_status)}</td>
        <td>${when(run.created_at)}</td>
        <td>${duration(run.started_at, run.finished_at)}</td>
        <td>${runCounts(run)}</td>
        <td class="num">${run.error_count ?? '0'}</td>
        <td>${run.message}</td>
      </tr>`,
  )
  const pager = html`<div class="pager">
    ${runsOffset > 0 ? html`<a href="/console/sites/${site.id}?runs_offset=${Math.max(0, runsOffset - runsPerPage)}">Newer runs</a>` : ''}
    ${runs.length === runsPerPage ? html`<a href="/console/sites/${site.id}?runs_offset=${runsOffset + runsPerPage}">Older runs</a>` : ''}
  </div>`
  return html`<section aria-labelledby="runs-heading" data-live-section="runs">
    <h2 id="runs-heading">Runs</h2>
    ${
      runs.length === 0
        ? html`<p class="muted">No runs yet.</p>`
        : dataTable(['Run', 'Action', 'Status', 'Queued', 'Duration', 'Products', '#Errors', 'Message'], rows)
    }
    ${pager}
  </section>`
}

function errorsSection({ site, errors, errorFilter }: SitePageData): Html {
  const option = (value: string, current: string) => html`<option value="${value}" ${value === current ? html` selected` : ''}>${value || 'any'}</option>`
  const rows = errors.map(
    (error) =>
      html`<tr>
        <td>${badge(error.type)}</td>
        <td>${badge(error.classification)}</td>
        <td>${error.error}</td>
        <td>${error.message}</td>
        <td><a href="/console/sites/${site.id}?pid=${error.pid}#errors-heading">${error.pid.slice(0, 8)}</a></td>
        <td>${when(error.created_at)}</td>
      </tr>`,
  )
  return html`<section aria-labelledby="errors-heading" data-live-section="errors">
    <h2 id="errors-heading">Site errors ${errorFilter.pid ? html`of run <code>${errorFilter.pid.slice(0, 8)}</code>` : 'of the latest run'}</h2>
    <form class="filters" method="get" action="/console/sites/${site.id}#errors-heading">
      <div><label for="pid">Run (pid)</label><input id="pid" name="pid" value="${errorFilter.pid}" size="38" /></div>
      <div>
        <label for="type">Type</label
        ><select id="type" name="type">
          ${['', 'Error', 'Warning', 'Info'].map((v) => option(v, errorFilter.type))}
        </select>
      </div>
      <div>
        <label for="classification">Classification</label
        ><select id="classification" name="classification">
          ${['', 'high', 'medium', 'low'].map((v) => option(v, errorFilter.classification))}
        </select>
      </div>
      <div><button type="submit">Filter</button></div>
    </form>
    ${errors.length === 0 ? html`<p class="muted">No site errors.</p>` : dataTable(['Type', 'Classification', 'Code', 'Message', 'Run', 'When'], rows)}
  </section>`
}
