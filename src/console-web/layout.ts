import type { ConsoleSession } from '../accounts/console-sessions.js'
import { html, type Html } from './html.js'

export interface PageFrame {
  title: string
  session: ConsoleSession | undefined
  /** Breadcrumbs after "Overview": [label, href] pairs, the last one the current page. */
  trail?: [string, string][]
  body: Html
}

/** The page around every console view: navigation, sign-out, the one stylesheet and script. */
export function page({ title, session, trail = [], body }: PageFrame): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Catalog Platform console</title>
        <link rel="stylesheet" href="/console/assets/console.css" />
        <link rel="icon" type="image/png" href="/console/assets/favicon.png" />
        <script src="/console/assets/chart.umd.min.js" defer></script>
        <script src="/console/assets/console.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header>
          <nav aria-label="Main">
            <span class="brand">Catalog Platform</span>
            ${session?.accountId ? html`<a href="/console">Overview</a> <a href="/console/webhooks">Webhooks</a> <a href="/console/activity">Activity</a>` : ''}
            ${session?.operator ? html`<a href="/console/operator">Operator</a>` : ''} ${session ? signOut(session) : ''}
          </nav>
          ${trail.length > 0 ? breadcrumbs(trail) : ''}
        </header>
        <main id="main">
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html>`
}

function signOut(session: ConsoleSession): Html {
  return html`<form class="sign-out" method="post" action="/console/sign-out">
    <input type="hidden" name="_csrf" value="${session.csrfToken}" />
    <button type="submit">Sign out</button>
  </form>`
}

function breadcrumbs(trail: [string, string][]): Html {
  const items = trail.map(([label, href], i) =>
    i === trail.length - 1 ? html`<li aria-current="page">${label}</li>` : html`<li><a href="${href}">${label}</a></li>`,
  )
  return html`<nav aria-label="Breadcrumb">
    <ol class="trail">
      ${items}
    </ol>
  </nav>`
}

/** A form field that carries the session's CSRF token. */
export function csrfField(session: ConsoleSession): Html {
  return html`<input type="hidden" name="_csrf" value="${session.csrfToken}" />`
}

/** A short status as a badge (success, failed, running, success with warnings, …); its class names it with _ for each space. */
export function badge(text: string): Html {
  return html`<span class="badge ${badgeClass(text)}">${text}</span>`
}

/** The class of a status's badge: `badge-success_with_warnings` (console.js names the live status's badge the same way). */
export function badgeClass(text: string): string {
  return `badge-${text
    .toLowerCase()
    .replace(/\s+/g, '_')
    .replace(/[^a-z_]/g, '')}`
}

/** A date and time as every page shows one: in UTC, saying so, to the second; the exact instant in `datetime`. */
export function when(date: Date | null | undefined): Html {
  if (!date) return html`—`
  return html`<time datetime="${date.toISOString()}">${date.toISOString().slice(0, 19).replace('T', ' ')} UTC</time>`
}

/** A duration in seconds, short. */
export function duration(start: Date | null | undefined, end: Date | null | undefined): string {
  if (!start || !end) return '—'
  const seconds = (end.getTime() - start.getTime()) / 1000
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`
  return seconds < 60 ? `${seconds.toFixed(1)} s` : `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`
}

/** A table's header row; a heading starting with # is a right-aligned number column. */
export function headings(names: string[], { numbers = true }: { numbers?: boolean } = {}): Html {
  const cells = names.map((name) =>
    numbers && name.startsWith('#') ? html`<th scope="col" class="num">${name.slice(1)}</th>` : html`<th scope="col">${name}</th>`,
  )
  return html`<tr>
    ${cells}
  </tr>`
}

/** How a dataTable is told apart and named. */
export interface TableOptions {
  /** The id of the element that says what the table holds. */
  describedBy?: string
  /** What the table holds, as its caption. */
  caption?: string
  /** A class of the table itself. */
  className?: string
  /** The names are a tenant's (attribute names): none is read as a number column's `#`. */
  tenantNames?: boolean
}

/**
 * The console's one table: under `names` (as `headings` takes them), scrolling sideways when wider
 * than the page.
 */
export function dataTable(names: string[], rows: Html[], { describedBy, caption, className, tenantNames }: TableOptions = {}): Html {
  const described = describedBy === undefined ? '' : html` aria-describedby="${describedBy}"`
  const classes = className === undefined ? '' : html` class="${className}"`
  return html`<div class="scroll">
    <table${described}${classes}>
      ${
        caption === undefined
          ? ''
          : html`<caption class="muted">
              ${caption}
            </caption>`
      }
      <thead>
        ${headings(names, { numbers: !tenantNames })}
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>
  </div>`
}
