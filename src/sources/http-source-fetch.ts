import http, { type IncomingMessage } from 'node:http'
import https from 'node:https'
import type { FetchedSourceSettings } from '../db/schema.js'
import { OutboundRefusedError } from '../net/outbound-guard.js'
import { pastDeadline, SourceFetchError, writeCounted, type FetchBudget, type SourceToFetch, type WrittenFile } from './fetch-parts.js'

// A feed URL's GET. Redirects are followed (feed hosts move files behind CDNs and from http to
// https), each hop through the outbound guard, and the credentials go only to the origin they were
// given for. The server's validators (ETag, Last-Modified) are sent back: a 304 reads nothing.
// As with pushes, what a server says never reaches an error text beyond its status code.

const MAX_REDIRECTS = 5
const REDIRECTS = new Set([301, 302, 303, 307, 308])

type FeedUrlSettings = Extract<FetchedSourceSettings, { kind: 'feed_url' }>

export async function fetchByHttp(source: SourceToFetch, settings: FeedUrlSettings, target: string): Promise<WrittenFile | 'unchanged'> {
  const origin = new URL(settings.url).origin
  let url = settings.url
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const address = checked(source, url)
    const response = await get(address, headersFor(source, settings, address.origin === origin), source)
    const status = response.statusCode ?? 0
    const location = response.headers.location
    if (REDIRECTS.has(status) && location) {
      response.resume()
      url = redirectTarget(location, address)
      continue
    }
    if (status === 304) {
      response.resume()
      return 'unchanged'
    }
    if (status < 200 || status > 299) {
      response.resume()
      throw new SourceFetchError(`${address.host} answered HTTP ${status}${http.STATUS_CODES[status] ? ` ${http.STATUS_CODES[status]}` : ''}`)
    }
    const declared = Number(response.headers['content-length'])
    if (Number.isFinite(declared) && declared > source.budget.maxBytes) {
      response.destroy()
      throw new SourceFetchError(`the file is ${declared} bytes, larger than ${source.budget.maxBytes} (SOURCE_MAX_BYTES)`)
    }
    const written = await writeCounted(response, target, source.budget.maxBytes).catch((error: unknown) => {
      throw error instanceof SourceFetchError ? error : new SourceFetchError(`the download from ${address.host} broke off`)
    })
    const etag = response.headers.etag
    const lastModified = response.headers['last-modified']
    const charset = charsetOf(response.headers['content-type'])
    const state = { ...(etag && { etag }), ...(lastModified && { last_modified: lastModified }), sha256: written.sha256 }
    return { ...written, state, ...(charset && { charset }) }
  }
  throw new SourceFetchError(`more than ${MAX_REDIRECTS} redirects from ${settings.url}`)
}

/** The charset parameter of a Content-Type (`text/csv; charset="windows-1252"`), if it names one. */
function charsetOf(contentType: string | undefined): string | undefined {
  return /;\s*charset\s*=\s*"?([A-Za-z0-9][\w.:-]{0,39})"?/i.exec(contentType ?? '')?.[1]
}

function redirectTarget(location: string, from: URL): string {
  try {
    return new URL(location, from).href
  } catch {
    throw new SourceFetchError(`${from.host} redirected to something that is not a URL`)
  }
}

/** The URL checked by the outbound guard; a refusal names the host only (a redirect's URL may carry a token). */
function checked(source: SourceToFetch, url: string): URL {
  let host = 'the URL'
  try {
    host = new URL(url).host || host
    return source.guard.checkTarget(url)
  } catch (error) {
    throw new SourceFetchError(error instanceof OutboundRefusedError ? `${host} is not allowed: ${error.reason}` : `${host.slice(0, 200)} is not a valid URL`)
  }
}

function headersFor(source: SourceToFetch, settings: FeedUrlSettings, sameOrigin: boolean): Record<string, string> {
  const headers: Record<string, string> = { 'user-agent': 'catalog-platform-source/1', accept: '*/*', 'accept-encoding': 'gzip' }
  const { state, credentials } = source
  if (state?.etag) headers['if-none-match'] = state.etag
  if (state?.last_modified) headers['if-modified-since'] = state.last_modified
  if (!sameOrigin) return headers
  if (settings.basic_user !== undefined) {
    headers.authorization = `Basic ${Buffer.from(`${settings.basic_user}:${credentials.password ?? ''}`).toString('base64')}`
  }
  if (settings.header_name !== undefined) headers[settings.header_name.toLowerCase()] = credentials.header_value ?? ''
  return headers
}

/**
 * The response to a GET, its body not read yet. The budget's deadline and idle limit stay armed
 * until the body has been read: either destroys the request, and the reading ends with its error.
 */
function get(url: URL, headers: Record<string, string>, source: SourceToFetch): Promise<IncomingMessage> {
  const { budget, guard } = source
  return new Promise<IncomingMessage>((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).request(url, { method: 'GET', agent: false, lookup: guard.lookup, headers })
    let connected = false
    let response: IncomingMessage | undefined
    // The body may be being read by then: it ends with the same error.
    const fail = (error: SourceFetchError) => {
      request.destroy(error)
      response?.destroy(error)
    }
    const deadline = setTimeout(() => fail(pastDeadline(budget)), Math.max(0, budget.deadline - Date.now()))
    // Idle is the server's silence: a body whose reader is behind (a large file parsed slower than it
    // arrives, or a busy process) holds the socket paused, which the socket's timer cannot tell from
    // silence, and once failed a 60 MB file on a loaded machine as "sent nothing". Such a body goes
    // on: its next read re-arms the timer, and the deadline still bounds the whole fetch.
    request.setTimeout(budget.idleMs, () => {
      if (response !== undefined && (response.readableLength > 0 || response.readableFlowing === false)) return
      fail(idle(budget))
    })
    request.on('socket', (socket) => socket.once('connect', () => (connected = true)))
    request.on('close', () => clearTimeout(deadline))
    request.on('response', (answer: IncomingMessage) => {
      response = answer
      resolve(answer)
    })
    request.on('error', (error: NodeJS.ErrnoException) => reject(fetchError(error, url, connected)))
    request.end()
  })
}

function idle(budget: FetchBudget): SourceFetchError {
  return new SourceFetchError(`the server sent nothing for ${Math.round(budget.idleMs / 1000)} s`)
}

function fetchError(error: NodeJS.ErrnoException, url: URL, connected: boolean): Error {
  if (error instanceof SourceFetchError) return error
  if (error instanceof OutboundRefusedError) return new SourceFetchError(`${url.hostname} is not allowed: ${error.reason}`)
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return new SourceFetchError(`could not resolve ${url.hostname}`)
  if (typeof error.code === 'string' && /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/.test(error.code)) {
    return new SourceFetchError(`the TLS connection to ${url.host} failed (${error.code})`)
  }
  // Refused, unreachable and reset read the same: the state of a port is not for tenants to probe.
  return new SourceFetchError(connected ? `the connection to ${url.host} broke off` : `could not connect to ${url.host}`)
}
