import { counted } from '../input/text-input.js'
import type { ConsoleSession } from '../accounts/console-sessions.js'
import type { ChannelHold } from '../db/schema.js'
import { html, type Html } from './html.js'
import { badge, csrfField, when } from './layout.js'
import { signedInWithPlatformCredential } from './pages.js'

// A channel held by a safety stop as the overview, the site page and the diagnostics page
// show it: a banner with the figures, the stop's message, a link to the channel's diagnostics and the
// Release button (a POST form with the session's CSRF token, like every write of the console).

/** A held channel, with what its banner names. */
export interface HeldChannel {
  siteId: string
  siteTitle: string
  channelId: string
  channelName: string
  hold: ChannelHold
}

/** The channel's banner data when a safety stop holds it. */
export function heldChannelOf(site: { id: string; title: string }, channel: { id: string; name: string; hold: ChannelHold | null }): HeldChannel | undefined {
  return channel.hold ? { siteId: site.id, siteTitle: site.title, channelId: channel.id, channelName: channel.name, hold: channel.hold } : undefined
}

/** The banners shown at most on one page; the others are counted. */
export const BANNERS_SHOWN = 5

function percent(share: number): string {
  return `${Number((share * 100).toFixed(1))} %`
}

/** The figures of a hold: products now against those delivered, or left out of those checked. */
export function holdFigures(hold: ChannelHold): string {
  if (hold.reason === 'drop') {
    const delivered = hold.products_previous ?? 0
    const drop = delivered === 0 ? 0 : 1 - hold.products / delivered
    return `${counted(hold.products, 'product')} now vs ${delivered} delivered: a drop of ${percent(drop)} (stop at ${percent(hold.threshold)})`
  }
  const share = hold.products_checked === 0 ? 0 : hold.products_left_out / hold.products_checked
  return `${hold.products_left_out} of ${hold.products_checked} checked products left out: ${percent(share)} (stop at ${percent(hold.threshold)})`
}

export function diagnosticsPath(siteId: string, channelId: string): string {
  return `/console/sites/${siteId}/channels/${channelId}/diagnostics`
}

function releaseForm(held: HeldChannel, session: ConsoleSession, returnTo: string): Html {
  if (!signedInWithPlatformCredential(session)) {
    return html`<p class="muted">Releasing takes a sign-in with the platform credential (X-Auth-Token), as POST …/release does.</p>`
  }
  return html`<form class="inline" method="post" action="/console/sites/${held.siteId}/channels/${held.channelId}/release">
    ${csrfField(session)}
    <input type="hidden" name="pid" value="${held.hold.pid}" />
    <input type="hidden" name="return" value="${returnTo}" />
    <button type="submit" aria-label="Release the held export of ${held.channelName}">Release</button>
  </form>`
}

/** One held channel's banner; `returnTo`: the page the release comes back to. */
export function holdBanner(held: HeldChannel, session: ConsoleSession, returnTo: string): Html {
  const { hold, siteId, channelId } = held
  const id = `held-${channelId}`
  const run = html`<a href="/console/sites/${siteId}?pid=${hold.pid}#errors-heading">${hold.pid.slice(0, 8)}</a>`
  return html`<section class="held" aria-labelledby="${id}" data-held-channel="${channelId}">
    <h2 id="${id}">${badge('held')} ${held.channelName} <span class="muted">#${channelId} · ${held.siteTitle}</span></h2>
    <p class="figures"><strong>${holdFigures(hold)}</strong></p>
    <p>${hold.message}.</p>
    <p class="muted">Held ${when(new Date(hold.held_at))} by run ${run}, until it is released or a later export passes.</p>
    <p>
      <a href="${diagnosticsPath(siteId, channelId)}">Diagnostics of ${held.channelName}</a> ·
      <a href="/console/sites/${siteId}#channel-${channelId}">The channel on its site page</a>
    </p>
    ${releaseForm(held, session, returnTo)}
  </section>`
}

/** The banners of held channels (at most BANNERS_SHOWN), and how many more are held; `total`: all held ones. */
export function holdBanners(held: HeldChannel[], total: number, session: ConsoleSession, returnTo: string): Html {
  const shown = held.slice(0, BANNERS_SHOWN)
  const more = total - shown.length
  return html`<div data-live-section="held">
    ${shown.map((entry) => holdBanner(entry, session, returnTo))}
    ${more > 0 ? html`<p class="muted" role="note">${more} more held channels are not shown here.</p>` : ''}
  </div>`
}

/** The notice after a release (the page's `released` parameter names the channel). */
export function releasedNotice(channel: { id: string; name: string } | undefined): Html {
  if (!channel) return html``
  return html`<p class="notice" role="status">The held export of ${channel.name} (#${channel.id}) was released: its feed now serves it.</p>`
}
