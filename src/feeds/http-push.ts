import http from 'node:http'
import https from 'node:https'
import type { Socket } from 'node:net'
import { OutboundRefusedError, type OutboundGuard } from '../net/outbound-guard.js'
import type { FeedStorage, StoredFeed } from './feed-storage.js'

export interface PushFile {
  /** Where the file is kept, and its key there. */
  storage: FeedStorage
  key: string
  filename: string
  contentType: string
}

export interface SendOptions {
  guard: OutboundGuard
  /** Limit of the attempt, from the start of the connection to the response's status line. */
  timeoutMs: number
  /** Aborts the attempt (the server is shutting down); the result is then `aborted`. */
  signal?: AbortSignal
}

/**
 * What one attempt came to. `error` says what failed in the service's own words (status code,
 * timeout, could not connect, refused by the guard): nothing a remote server sends — body, reason
 * phrase, headers — ever reaches it, and a failed connection says no more than that it failed.
 */
export type SendResult =
  { ok: true } | { ok: false; kind: 'status' | 'timeout' | 'unreachable' | 'refused' | 'missing' | 'aborted'; error: string; retry: boolean }

type Failure = Extract<SendResult, { ok: false }>

const fail = (kind: Failure['kind'], error: string, retry: boolean): Failure => ({ ok: false, kind, error, retry })

/**
 * POSTs a file, streamed from its storage, to an http destination, once. Redirects are never followed.
 * The connection goes through the outbound guard's lookup, so the address connected to is the one
 * the guard checked. Never throws.
 */
export async function sendFile(url: string, file: PushFile, options: SendOptions): Promise<SendResult> {
  let target: URL
  try {
    target = options.guard.checkTarget(url)
  } catch (error) {
    return fail('refused', error instanceof OutboundRefusedError ? error.message : 'not a valid URL', false)
  }
  let stored: StoredFeed | undefined
  try {
    stored = await file.storage.open(file.key)
  } catch {
    stored = undefined
  }
  if (!stored) return fail('missing', `the file ${file.filename} is no longer there`, false)
  const size = stored.size
  const body = stored.stream()
  const host = target.host
  return new Promise<SendResult>((resolve) => {
    let connected = false
    let settled = false
    const finish = (result: SendResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onAbort)
      request.destroy()
      body.destroy()
      resolve(result)
    }
    const request = (target.protocol === 'https:' ? https : http).request(target, {
      method: 'POST',
      agent: false,
      lookup: options.guard.lookup,
      headers: {
        'content-type': file.contentType,
        'content-length': String(size),
        'content-disposition': contentDisposition(file.filename),
      },
    })
    request.on('socket', (socket: Socket) => socket.once('connect', () => (connected = true)))
    request.on('response', (response) => {
      // The status decides; the body is not read at all.
      response.resume()
      finish(statusResult(response.statusCode ?? 0))
    })
    request.on('error', (error: NodeJS.ErrnoException) => finish(errorResult(error, connected, host)))
    body.on('error', () => finish(fail('missing', `the file ${file.filename} could not be read`, false)))
    const seconds = Math.round(options.timeoutMs / 100) / 10
    const timer = setTimeout(
      () =>
        finish(
          connected ? fail('timeout', `no response within ${seconds} s`, true) : fail('unreachable', `could not connect to ${host} within ${seconds} s`, true),
        ),
      options.timeoutMs,
    )
    const onAbort = () => finish(fail('aborted', 'the server stopped before the attempt ended', true))
    if (options.signal?.aborted) onAbort()
    else options.signal?.addEventListener('abort', onAbort, { once: true })
    body.pipe(request)
  })
}

function statusResult(status: number): SendResult {
  if (status >= 200 && status < 300) return { ok: true }
  // Node's own reason phrase for the code, never the one the server sent.
  const phrase = http.STATUS_CODES[status]
  const text = `HTTP ${status}${phrase ? ` ${phrase}` : ''}`
  if (status >= 300 && status < 400) return fail('status', `${text} (redirects are not followed)`, false)
  return fail('status', text, status === 408 || status === 429 || status >= 500)
}

function errorResult(error: NodeJS.ErrnoException, connected: boolean, host: string): Failure {
  if (error instanceof OutboundRefusedError) return fail('refused', error.message, false)
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return fail('unreachable', `could not resolve ${host.replace(/:\d+$/, '')}`, true)
  // Refused, unreachable and reset all read the same: the state of a port is not for tenants to probe.
  if (!connected) return fail('unreachable', `could not connect to ${host}`, true)
  if (typeof error.code === 'string' && /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/.test(error.code)) {
    return fail('unreachable', `the TLS connection to ${host} failed (${error.code})`, false)
  }
  return fail('unreachable', `the connection to ${host} closed before a response`, true)
}

/** `attachment` with the name quoted; a non-ASCII name also goes in `filename*` (RFC 6266). */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '\\$&')
  const header = `attachment; filename="${ascii}"`
  if (/^[\x20-\x7e]*$/.test(filename)) return header
  // RFC 5987 value characters: encodeURIComponent leaves ' ( ) * as they are, which it does not allow.
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `${header}; filename*=UTF-8''${encoded}`
}
