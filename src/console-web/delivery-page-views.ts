import type { ConsoleSession } from '../accounts/console-sessions.js'
import type { ChannelDetails } from '../channels/channels.js'
import type { DeliveryAttempt, DestinationTest } from '../channels/destination-checks.js'
import type { ChannelDestination, FileServerSettings } from '../db/schema.js'
import { html, type Html } from './html.js'
import { badge, csrfField, dataTable, when } from './layout.js'
import { signedInWithPlatformCredential } from './pages.js'

// A channel's destinations and deliveries page (delivery-page-routes.ts): where its files
// go, as a person reads it (a file server's address, login, directory and the key or certificate it
// must present; its credentials never), a Test button per file server, and every delivery attempt,
// newest first, paged on the server. Nothing here reads `sealed_credentials`.

/** Destination types as the platform interface names them (destination_name). */
const KIND_NAMES: Record<ChannelDestination['kind'], string> = { feed: 'Feed URL', http: 'HTTP POST', sftp: 'SFTP', ftps: 'FTPS' }

export interface DeliveryPageData {
  details: ChannelDetails
  session: ConsoleSession
  attempts: DeliveryAttempt[]
  offset: number
  perPage: number
  /** Whether attempts older than those shown exist. */
  more: boolean
  /** The Test just run, shown above the destinations. */
  test?: DestinationTest
}

export function deliveriesPath(siteId: string, channelId: string): string {
  return `/console/sites/${siteId}/channels/${channelId}/deliveries`
}

export function deliveryPage(data: DeliveryPageData): Html {
  const { channel } = data.details
  return html`<p class="muted">
      Channel #${channel.id} · ${channel.format} · ${channel.export_name} ·
      <a href="/console/sites/${channel.site_id}#channel-${channel.id}">Back to the site</a>
    </p>
    ${data.test ? testResult(data.test, data.details.destinations) : ''} ${destinationsSection(data)} ${attemptsSection(data)}`
}

function kindName(kind: ChannelDestination['kind']): string {
  return KIND_NAMES[kind]
}

/** "SFTP destination #3 (Warehouse)", as the Test button and its outcome name it. */
function destinationLabel(destination: ChannelDestination): string {
  return `${kindName(destination.kind)} destination #${destination.id}${destination.name ? ` (${destination.name})` : ''}`
}

function destinationName(destination: ChannelDestination): string {
  return destination.name ?? kindName(destination.kind)
}

function isFileServer(destination: ChannelDestination): boolean {
  return destination.kind === 'sftp' || destination.kind === 'ftps'
}

/** The Test's outcome: OK with where it wrote and how long it took, or why it failed. */
function testResult(test: DestinationTest, destinations: ChannelDestination[]): Html {
  const destination = destinations.find((d) => d.id === test.destinationId)
  const named = destination ? destinationLabel(destination) : `destination #${test.destinationId}`
  if (test.ok) {
    return html`<div class="notice" role="status" id="test-result" data-outcome="ok">
      Test of ${named}: <strong>OK</strong>. Wrote and removed <code data-field="remote-path">${test.remotePath ?? ''}</code> in
      <span data-field="duration">${test.durationMs} ms</span>.
    </div>`
  }
  return html`<div class="error" role="status" id="test-result" data-outcome="failed">
    Test of ${named}: <strong>failed</strong> after <span data-field="duration">${test.durationMs} ms</span>:
    <span data-field="error">${test.error ?? 'no reason given'}</span>
    ${test.remotePath ? html`(<code data-field="remote-path">${test.remotePath}</code>)` : ''}
  </div>`
}

function destinationsSection(data: DeliveryPageData): Html {
  const { destinations } = data.details
  const canTest = signedInWithPlatformCredential(data.session)
  const hasFileServer = destinations.some(isFileServer)
  return html`<section aria-labelledby="destinations-heading">
    <h2 id="destinations-heading">Destinations</h2>
    ${destinations.length === 0 ? html`<p class="muted">No destinations.</p>` : destinations.map((d) => destinationArticle(d, data, canTest))}
    ${
      hasFileServer && !canTest
        ? html`<p class="muted">Testing a destination takes a sign-in with the platform credential (X-Auth-Token), as POST …/destinations/{id}/test does.</p>`
        : ''
    }
  </section>`
}

function destinationArticle(destination: ChannelDestination, data: DeliveryPageData, canTest: boolean): Html {
  const kind = kindName(destination.kind)
  const headingId = `destination-${destination.id}`
  return html`<article aria-labelledby="${headingId}" class="destination" data-kind="${destination.kind}">
    <h3 id="${headingId}">
      ${kind}${destination.name ? html` · ${destination.name}` : ''} <span class="muted">#${destination.id}</span>
      ${badge(destination.active ? 'active' : 'inactive')}
    </h3>
    <dl>
      <dt>Type</dt>
      <dd data-field="type">${kind}</dd>
      <dt>Name</dt>
      <dd data-field="name">${destinationName(destination)}</dd>
      <dt>Active</dt>
      <dd data-field="active">${destination.active ? 'yes' : 'no'}</dd>
      ${whereItGoes(destination)}
    </dl>
    ${isFileServer(destination) && canTest ? testForm(destination, data) : ''}
  </article>`
}

function whereItGoes(destination: ChannelDestination): Html {
  if (destination.kind === 'feed') {
    return html`<dt>Where</dt>
      <dd data-field="where">served by the platform at the channel's feed URLs (on the site page)</dd>`
  }
  if (destination.kind === 'http') {
    return html`<dt>URL</dt>
      <dd data-field="url"><code>${destination.url ?? ''}</code></dd>`
  }
  const settings = destination.settings
  if (!settings)
    return html`<dt>Server</dt>
      <dd class="muted">no server settings</dd>`
  return html`<dt>Server</dt>
    <dd data-field="server"><code>${hostPort(settings)}</code></dd>
    <dt>User</dt>
    <dd data-field="user"><code>${settings.user}</code></dd>
    <dt>Directory</dt>
    <dd data-field="directory">${directory(settings)}</dd>
    ${destination.kind === 'sftp' ? hostKey(settings) : certificate(settings)}
    <dt>Upload under a temporary name</dt>
    <dd data-field="temp-rename">${settings.temp_rename ? 'yes' : 'no'}</dd>
    <dt>Credentials</dt>
    <dd data-field="credentials">stored (never shown)</dd>`
}

function directory(settings: FileServerSettings): Html {
  return settings.directory === '' ? html`<span class="muted">the login directory</span>` : html`<code>${settings.directory}</code>`
}

function hostPort({ host, port }: FileServerSettings): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`
}

function hostKey(settings: FileServerSettings): Html {
  return html`<dt>Host key fingerprint</dt>
    <dd data-field="host-key">${settings.host_key_sha256 ? html`<code>${settings.host_key_sha256}</code>` : html`<span class="muted">none pinned</span>`}</dd>`
}

function certificate(settings: FileServerSettings): Html {
  if (settings.insecure) {
    return html`<dt>TLS</dt>
      <dd data-field="certificate">none: plain FTP is allowed (insecure)</dd>`
  }
  return html`<dt>Pinned certificate (SHA-256)</dt>
    <dd data-field="certificate">
      ${
        settings.tls_certificate_sha256
          ? html`<code>${settings.tls_certificate_sha256}</code>`
          : html`<span class="muted">none pinned: the system's certificate authorities</span>`
      }
    </dd>`
}

function testForm(destination: ChannelDestination, { details, session }: DeliveryPageData): Html {
  const { channel } = details
  return html`<form class="inline" method="post" action="/console/sites/${channel.site_id}/channels/${channel.id}/destinations/${destination.id}/test">
    ${csrfField(session)}
    <button type="submit" aria-label="Test ${destinationLabel(destination)}">Test</button>
    <span class="muted">connects, checks the ${destination.kind === 'sftp' ? 'host key' : 'certificate'}, writes a small file and removes it</span>
  </form>`
}

function attemptsSection({ details, attempts, offset, perPage, more }: DeliveryPageData): Html {
  const path = deliveriesPath(details.channel.site_id, details.channel.id)
  const rows = attempts.map((attempt) => {
    return html`<tr id="attempt-${attempt.id}" class="delivery-attempt">
      <td>${when(attempt.startedAt)}</td>
      <td data-field="file">${attempt.filename}</td>
      <td data-field="destination"><code>${attempt.destination}</code></td>
      <td class="num" data-field="attempt">${attempt.attempt}</td>
      <td data-field="outcome">${badge(attempt.outcome)}</td>
      <td class="num" data-field="bytes">${attempt.bytes === null ? '—' : attempt.bytes}</td>
      <td data-field="remote-path">${attempt.remotePath === null ? '—' : html`<code>${attempt.remotePath}</code>`}</td>
      <td class="num" data-field="duration">${attempt.durationMs} ms</td>
      <td data-field="error">${attempt.error ?? ''}</td>
    </tr>`
  })
  const pager = html`<div class="pager">
    ${offset > 0 ? html`<a href="${offset - perPage > 0 ? `${path}?offset=${offset - perPage}` : path}">Newer attempts</a>` : ''}
    ${more ? html`<a href="${path}?offset=${offset + perPage}" rel="next">Older attempts</a>` : ''}
  </div>`
  const empty = offset > 0 ? 'No older delivery attempts.' : 'No delivery attempts yet: an export delivers its files to HTTP POST, SFTP and FTPS destinations.'
  return html`<section aria-labelledby="attempts-heading">
    <h2 id="attempts-heading">Delivery attempts, newest first</h2>
    ${
      attempts.length === 0
        ? html`<p class="muted">${empty}</p>`
        : dataTable(['Time (UTC)', 'File', 'Destination', '#Attempt', 'Outcome', '#Bytes', 'Remote path', '#Duration', 'Error'], rows, {
            describedBy: 'attempts-heading',
          })
    }
    ${pager}
  </section>`
}
