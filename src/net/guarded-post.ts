import http, { type ClientRequest, type IncomingMessage } from 'node:http'
import https from 'node:https'
import type { Socket } from 'node:net'
import type { Readable } from 'node:stream'
import { OutboundRefusedError, type OutboundGuard } from './outbound-guard.js'

// The one POST this service sends on a tenant's behalf (pushes of feed files to http destinations,
// webhook deliveries). What a receiver sends back never reaches an error text: a failure is told in
// the service's own words (the status code with Node's reason phrase, timeout, could not connect,
// refused by the guard), and a failed connection says no more than that it failed, so a tenant
// cannot use a destination to read or probe what the service reaches.

/** A body: bytes, or a stream of `size` bytes (a stored file). */
export type PostBody = Buffer | { stream: Readable; size: number }

export interface GuardedPostRequest {
  url: string
  /** Headers besides content-length, which the body sets. */
  headers: Record<string, string>
  /** The body, or how to open it once the URL passed the guard; undefined: there is none any more. */
  body: PostBody | (() => Promise<PostBody | undefined>)
  guard: OutboundGuard
  /** Limit of the attempt, from the start of the connection to the end of the part of the answer that is read. */
  timeoutMs: number
  /** Aborts the attempt (the worker stops, or ends it early): the result is then `aborted`. */
  signal?: AbortSignal
  /** Bytes of the answer kept as text (`body`); 0, the default: the status decides and the answer is not read. */
  keepResponseBytes?: number
}

export type PostFailureKind = 'status' | 'timeout' | 'unreachable' | 'refused' | 'aborted' | 'no body' | 'unreadable body'

/**
 * What one POST came to. `status` is the receiver's status code when it answered, `body` the kept
 * part of its answer (keepResponseBytes), `error` what failed, in the service's own words, and
 * `retry` whether another attempt may fare better (timeouts, connections, 408, 429, 5xx).
 */
export type PostResult =
  | { ok: true; status: number; error: null; body: string | null }
  | { ok: false; kind: PostFailureKind; status: number | null; error: string; retry: boolean; body: string | null }

export type PostFailure = Extract<PostResult, { ok: false }>

const failure = (kind: PostFailureKind, error: string, retry: boolean, status: number | null = null, body: string | null = null): PostFailure => ({
  ok: false,
  kind,
  status,
  error,
  retry,
  body,
})

/**
 * POSTs once. Redirects are never followed, and the connection goes through the outbound guard's
 * lookup: the address connected to is the one the guard checked. Never throws.
 */
export async function guardedPost(request: GuardedPostRequest): Promise<PostResult> {
  let target: URL
  try {
    target = request.guard.checkTarget(request.url)
  } catch (error) {
    return failure('refused', error instanceof OutboundRefusedError ? error.message : 'not a valid URL', false)
  }
  let body: PostBody | undefined
  try {
    body = typeof request.body === 'function' ? await request.body() : request.body
  } catch {
    body = undefined
  }
  if (!body) return failure('no body', 'there is nothing to send any more', false)
  return send(target, body, request)
}

/** The attempt itself, to its one result: the answer, an error, the timeout or the abort, whichever comes first. */
function send(target: URL, body: PostBody, options: GuardedPostRequest): Promise<PostResult> {
  const host = target.host
  const stream = Buffer.isBuffer(body) ? undefined : body.stream
  return new Promise<PostResult>((resolve) => {
    let connected = false
    let settled = false
    const finish = (result: PostResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onAbort)
      request.destroy()
      stream?.destroy()
      resolve(result)
    }
    const size = Buffer.isBuffer(body) ? body.length : body.size
    const request = (target.protocol === 'https:' ? https : http).request(target, {
      method: 'POST',
      agent: false,
      lookup: options.guard.lookup,
      headers: { ...options.headers, 'content-length': String(size) },
    })
    request.on('socket', (socket: Socket) => socket.once('connect', () => (connected = true)))
    request.on('response', (response) => readAnswer(response, options.keepResponseBytes ?? 0, finish))
    request.on('error', (error: NodeJS.ErrnoException) => finish(errorResult(error, connected, host)))
    const seconds = Math.round(options.timeoutMs / 100) / 10
    const onTimeout = () =>
      finish(
        connected
          ? failure('timeout', `no response within ${seconds} s`, true)
          : failure('unreachable', `could not connect to ${host} within ${seconds} s`, true),
      )
    const timer = setTimeout(onTimeout, options.timeoutMs)
    const onAbort = () => finish(failure('aborted', 'the server stopped before the attempt ended', true))
    if (options.signal?.aborted) onAbort()
    else options.signal?.addEventListener('abort', onAbort, { once: true })
    writeBody(request, body, () => finish(failure('unreadable body', 'the body could not be read', false)))
  })
}

function writeBody(request: ClientRequest, body: PostBody, onUnreadable: () => void): void {
  if (Buffer.isBuffer(body)) {
    request.end(body)
    return
  }
  body.stream.on('error', onUnreadable)
  body.stream.pipe(request)
}

/** The status decides; of the answer at most `keepBytes` are read, and not waited for beyond them. */
function readAnswer(response: IncomingMessage, keepBytes: number, finish: (result: PostResult) => void): void {
  const status = response.statusCode ?? 0
  if (keepBytes <= 0) {
    response.resume()
    finish(statusResult(status, null))
    return
  }
  const chunks: Buffer[] = []
  let size = 0
  const done = () => finish(statusResult(status, bodyText(Buffer.concat(chunks).subarray(0, keepBytes))))
  response.on('data', (chunk: Buffer) => {
    chunks.push(chunk)
    size += chunk.length
    if (size >= keepBytes) done()
  })
  response.on('end', done)
  response.on('error', done)
}

/** The kept part of an answer as text a Postgres column holds (no NUL); null when there was none. */
function bodyText(bytes: Buffer): string | null {
  if (bytes.length === 0) return null
  return bytes.toString('utf8').replace(/\0/g, '')
}

function statusResult(status: number, body: string | null): PostResult {
  if (status >= 200 && status < 300) return { ok: true, status, error: null, body }
  // Node's own reason phrase for the code, never the one the receiver sent.
  const phrase = http.STATUS_CODES[status]
  const text = `HTTP ${status}${phrase ? ` ${phrase}` : ''}`
  if (status >= 300 && status < 400) return failure('status', `${text} (redirects are not followed)`, false, status, body)
  return failure('status', text, status === 408 || status === 429 || status >= 500, status, body)
}

function errorResult(error: NodeJS.ErrnoException, connected: boolean, host: string): PostFailure {
  if (error instanceof OutboundRefusedError) return failure('refused', error.message, false)
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return failure('unreachable', `could not resolve ${host.replace(/:\d+$/, '')}`, true)
  // Refused, unreachable and reset all read the same: the state of a port is not for tenants to probe.
  if (!connected) return failure('unreachable', `could not connect to ${host}`, true)
  if (typeof error.code === 'string' && /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/.test(error.code)) {
    return failure('unreachable', `the TLS connection to ${host} failed (${error.code})`, false)
  }
  return failure('unreachable', `the connection to ${host} closed before a response`, true)
}
