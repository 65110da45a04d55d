import http from 'node:http'
import https from 'node:https'
import type { Socket } from 'node:net'
import { OutboundRefusedError, type OutboundGuard } from '../net/outbound-guard.js'

/** What is kept of a receiver's answer: its first KiB. */
export const RESPONSE_BODY_BYTES = 1024

export interface PostOptions {
  guard: OutboundGuard
  /** Limit of the attempt, from the start of the connection to the end of the part of the answer that is read. */
  timeoutMs: number
  /** Aborts the attempt (the server is shutting down): the result is then `aborted`. */
  signal?: AbortSignal
}

/**
 * What one POST came to. `status` is the receiver's status code when it answered; `error` says
 * in the service's own words what failed (status, timeout, could not connect, refused by the guard);
 * `body` is the first KiB of the answer, as text.
 */
export interface PostResult {
  ok: boolean
  aborted: boolean
  status: number | null
  error: string | null
  body: string | null
}

const failed = (error: string, status: number | null = null, body: string | null = null): PostResult => ({ ok: false, aborted: false, status, error, body })

/**
 * POSTs a JSON body once. Redirects are never followed, and the connection goes through the
 * outbound guard's lookup: the address connected to is the one the guard checked (the same path as
 * pushes to channel http destinations, src/feeds/http-push.ts). Never throws.
 */
export async function postJson(url: string, headers: Record<string, string>, body: string, options: PostOptions): Promise<PostResult> {
  let target: URL
  try {
    target = options.guard.checkTarget(url)
  } catch (error) {
    return failed(error instanceof OutboundRefusedError ? error.message : 'not a valid URL')
  }
  const payload = Buffer.from(body, 'utf8')
  const host = target.host
  return new Promise<PostResult>((resolve) => {
    let connected = false
    let settled = false
    const finish = (result: PostResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onAbort)
      request.destroy()
      resolve(result)
    }
    const request = (target.protocol === 'https:' ? https : http).request(target, {
      method: 'POST',
      agent: false,
      lookup: options.guard.lookup,
      headers: { 'content-type': 'application/json', 'content-length': String(payload.length), ...headers },
    })
    request.on('socket', (socket: Socket) => socket.once('connect', () => (connected = true)))
    request.on('response', (response) => {
      const status = response.statusCode ?? 0
      const chunks: Buffer[] = []
      let size = 0
      const done = () => finish(statusResult(status, bodyText(Buffer.concat(chunks).subarray(0, RESPONSE_BODY_BYTES))))
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk)
        size += chunk.length
        // Enough is kept: the rest of the answer is not waited for.
        if (size >= RESPONSE_BODY_BYTES) done()
      })
      response.on('end', done)
      response.on('error', done)
    })
    request.on('error', (error: NodeJS.ErrnoException) => finish(errorResult(error, connected, host)))
    const seconds = Math.round(options.timeoutMs / 100) / 10
    const timer = setTimeout(
      () => finish(failed(connected ? `no response within ${seconds} s` : `could not connect to ${host} within ${seconds} s`)),
      options.timeoutMs,
    )
    const onAbort = () => finish({ ...failed('the server stopped before the attempt ended'), aborted: true })
    if (options.signal?.aborted) onAbort()
    else options.signal?.addEventListener('abort', onAbort, { once: true })
    request.end(payload)
  })
}

/** The kept part of an answer as text a Postgres column holds (no NUL); null when there was none. */
function bodyText(bytes: Buffer): string | null {
  if (bytes.length === 0) return null
  return bytes.toString('utf8').replace(/\0/g, '')
}

function statusResult(status: number, body: string | null): PostResult {
  if (status >= 200 && status < 300) return { ok: true, aborted: false, status, error: null, body }
  // Node's own reason phrase for the code, never the one the receiver sent.
  const phrase = http.STATUS_CODES[status]
  const text = `HTTP ${status}${phrase ? ` ${phrase}` : ''}`
  return failed(status >= 300 && status < 400 ? `${text} (redirects are not followed)` : text, status, body)
}

function errorResult(error: NodeJS.ErrnoException, connected: boolean, host: string): PostResult {
  if (error instanceof OutboundRefusedError) return failed(error.message)
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return failed(`could not resolve ${host.replace(/:\d+$/, '')}`)
  // Refused, unreachable and reset all read the same: the state of a port is not for tenants to probe.
  if (!connected) return failed(`could not connect to ${host}`)
  if (typeof error.code === 'string' && /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/.test(error.code)) {
    return failed(`the TLS connection to ${host} failed (${error.code})`)
  }
  return failed(`the connection to ${host} closed before a response`)
}
