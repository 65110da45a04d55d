import type { ConsoleSession } from '../accounts/console-sessions.js'
import type { Webhook } from '../db/schema.js'
import type { DeliveryRow } from '../webhooks/deliveries.js'
import { DELIVERY_STATUSES, type WebhookPanel } from '../webhooks/webhook-overview.js'
import { html, type Html } from './html.js'
import { badge, csrfField, dataTable, when } from './layout.js'

export const DELIVERIES_PER_PAGE = 20

export interface WebhooksPageData {
  panels: WebhookPanel[]
  session: ConsoleSession
  /** The delivery a retry just asked to send again, as it is now. */
  retried: DeliveryRow | undefined
}

export function webhooksPage({ panels, session, retried }: WebhooksPageData): Html {
  if (panels.length === 0) {
    return html`<p class="muted">No webhooks yet: subscribe a receiver through the platform interface (<code>POST /platform/v2/webhooks</code>).</p>`
  }
  return html`${retried ? retriedNotice(retried) : ''} ${panels.map((panel) => webhookSection(panel, session))}`
}

function retriedNotice(delivery: DeliveryRow): Html {
  return html`<p class="live" role="status">
    Delivery #${delivery.id} (${delivery.event_type}) of webhook #${delivery.webhook_id} is sent again now: ${badge(delivery.status)}
    ${delivery.status === 'pending' ? html`<span class="muted">next attempt ${when(delivery.next_attempt_at)}</span>` : ''}
  </p>`
}

function pageHref(webhookId: string, status: string, offset: number): string {
  const query = new URLSearchParams({ webhook: webhookId, ...(status && { status }), offset: String(offset) })
  return `/console/webhooks?${query.toString()}#webhook-${webhookId}`
}

function webhookSection(panel: WebhookPanel, session: ConsoleSession): Html {
  const { webhook, deliveries, more, offset, status } = panel
  const option = (value: string) => html`<option value="${value}" ${value === status ? html` selected` : ''}>${value || 'any'}</option>`
  const pager = html`<div class="pager">
    ${offset > 0 ? html`<a href="${pageHref(webhook.id, status, Math.max(0, offset - DELIVERIES_PER_PAGE))}">Newer deliveries</a>` : ''}
    ${more ? html`<a href="${pageHref(webhook.id, status, offset + DELIVERIES_PER_PAGE)}">Older deliveries</a>` : ''}
  </div>`
  return html`<section id="webhook-${webhook.id}" aria-labelledby="webhook-${webhook.id}-heading">
    <h2 id="webhook-${webhook.id}-heading">Webhook #${webhook.id} ${badge(webhook.active ? 'active' : 'disabled')}</h2>
    ${subscription(webhook)}
    <h3 id="webhook-${webhook.id}-deliveries">Deliveries${status ? ` (${status})` : ''}, newest first</h3>
    <form class="filters" method="get" action="/console/webhooks#webhook-${webhook.id}">
      <input type="hidden" name="webhook" value="${webhook.id}" />
      <div>
        <label for="status-${webhook.id}">Status</label
        ><select id="status-${webhook.id}" name="status">
          ${['', ...DELIVERY_STATUSES].map(option)}
        </select>
      </div>
      <div><button type="submit">Filter</button></div>
    </form>
    ${
      webhook.active
        ? ''
        : html`<p class="muted">
            The webhook is not active: activate it (<code>PUT /platform/v2/webhooks/${webhook.id}</code> with <code>"active": true</code>) to retry its
            deliveries.
          </p>`
    }
    ${deliveries.length === 0 ? html`<p class="muted">No deliveries${status ? ` with status ${status}` : ''}.</p>` : deliveriesTable(panel, session)} ${pager}
  </section>`
}

function subscription(webhook: Webhook): Html {
  const row = (label: string, value: Html | string | number) =>
    html`<tr>
      <th scope="row">${label}</th>
      <td>${value}</td>
    </tr>`
  const disabled = html`<span class="error">${webhook.disabled_reason}</span> <span class="muted">${when(webhook.disabled_at)}</span>`
  return html`<table>
    <tbody>
      ${row('URL', html`<code>${webhook.url}</code>`)} ${row('Events', webhook.events.join(', '))}
      ${webhook.description ? row('Description', webhook.description) : ''} ${row('Consecutive failures', webhook.consecutive_failures)}
      ${webhook.failing_since ? row('Failing since', when(webhook.failing_since)) : ''} ${webhook.disabled_reason ? row('Disabled', disabled) : ''}
    </tbody>
  </table>`
}

function deliveriesTable({ webhook, deliveries, offset, status }: WebhookPanel, session: ConsoleSession): Html {
  const rows = deliveries.map(
    (delivery) =>
      html`<tr id="delivery-${delivery.id}">
        <td>#${delivery.id}</td>
        <td>${delivery.event_type}<br /><code class="muted">${delivery.event_id}</code></td>
        <td>${badge(delivery.status)}</td>
        <td class="num">${delivery.attempts}</td>
        <td>${response(delivery)}</td>
        <td>${delivery.last_error ?? '—'}</td>
        <td>${delivery.status === 'pending' ? when(delivery.next_attempt_at) : '—'}</td>
        <td>${when(delivery.created_at)}<br /><span class="muted">last attempt ${when(delivery.last_attempt_at)}</span></td>
        <td>${webhook.active ? retryForm(delivery, session, status ? 0 : offset) : ''}</td>
      </tr>`,
  )
  const names = ['Delivery', 'Event', 'Status', '#Attempts', 'Last response', 'Last error', 'Next attempt', 'Created', 'Retry']
  return dataTable(names, rows, { describedBy: `webhook-${webhook.id}-deliveries` })
}

/** The last answer's status code, and the first KiB of its body that was kept. */
function response(delivery: DeliveryRow): Html {
  const code = delivery.last_response_code === null ? html`<span class="muted">none</span>` : html`HTTP ${delivery.last_response_code}`
  if (!delivery.response_body) return code
  return html`${code}
    <details>
      <summary>Body (first KiB)</summary>
      <pre>${delivery.response_body}</pre>
    </details>`
}

function retryForm(delivery: DeliveryRow, session: ConsoleSession, offset: number): Html {
  return html`<form class="inline" method="post" action="/console/webhooks/${delivery.webhook_id}/deliveries/${delivery.id}/retry">
    ${csrfField(session)}
    <input type="hidden" name="offset" value="${offset}" />
    <button type="submit" class="secondary" aria-label="Retry delivery #${delivery.id}">Retry</button>
  </form>`
}
