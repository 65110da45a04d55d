import { createReadStream } from 'node:fs'
import fs from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'

export interface PushFile {
  path: string
  filename: string
  contentType: string
}

export interface PushOptions {
  /** Tries in all, the first included (default 3). */
  attempts?: number
  /** Wait before the second try; doubled before each further one (default 500 ms). */
  backoffMs?: number
  /** Limit of one try, from the request to the response headers (default 60 s). */
  timeoutMs?: number
  fetch?: typeof fetch
}

export type PushResult = { ok: true; attempts: number } | { ok: false; attempts: number; error: string }

type Attempt = { ok: true } | { ok: false; error: string; retry: boolean }

/**
 * POSTs a file, streamed from disk, to an http destination. Retries what may pass on a second try
 * (network errors, timeouts, 408, 429, 5xx) with exponential backoff; a client error or a redirect
 * is final. Never throws: the export turns a failure into a site error.
 */
export async function pushFile(url: string, file: PushFile, options: PushOptions = {}): Promise<PushResult> {
  const attempts = Math.max(1, Math.floor(options.attempts ?? 3))
  const backoffMs = options.backoffMs ?? 500
  let target: URL
  try {
    target = new URL(url)
    if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error('not http')
  } catch {
    return { ok: false, attempts: 0, error: `not an http(s) URL: ${url}` }
  }
  for (let attempt = 1; ; attempt++) {
    const outcome = await tryPush(target, file, options.timeoutMs ?? 60_000, options.fetch ?? fetch)
    if (outcome.ok) return { ok: true, attempts: attempt }
    if (!outcome.retry || attempt >= attempts) return { ok: false, attempts: attempt, error: outcome.error }
    await sleep(backoffMs * 2 ** (attempt - 1))
  }
}

async function tryPush(url: URL, file: PushFile, timeoutMs: number, fetchImpl: typeof fetch): Promise<Attempt> {
  let size: number
  try {
    size = (await fs.stat(file.path)).size
  } catch (error) {
    return { ok: false, error: `cannot read ${file.filename}: ${describe(error)}`, retry: false }
  }
  const body = createReadStream(file.path)
  try {
    const response = await fetchImpl(url, {
      method: 'POST',
      headers: {
        'content-type': file.contentType,
        'content-length': String(size),
        'content-disposition': contentDisposition(file.filename),
      },
      // Node's fetch streams an async iterable body; `duplex` is required for a streamed body.
      body: body as unknown as RequestInit['body'],
      duplex: 'half',
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    } as RequestInit)
    const excerpt = await bodyExcerpt(response)
    if (response.status >= 200 && response.status < 300) return { ok: true }
    const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${excerpt ? `: ${excerpt}` : ''}`
    if (response.status >= 300 && response.status < 400) return { ok: false, error: `${status} (redirects are not followed)`, retry: false }
    const retry = response.status === 408 || response.status === 429 || response.status >= 500
    return { ok: false, error: status, retry }
  } catch (error) {
    if (error instanceof Error && error.name === 'TimeoutError') return { ok: false, error: `no response within ${timeoutMs} ms`, retry: true }
    return { ok: false, error: describe(error), retry: true }
  } finally {
    body.destroy()
  }
}

/** The start of the response body, for the error text; the rest is dropped unread. */
async function bodyExcerpt(response: Response): Promise<string> {
  if (!response.body) return ''
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let length = 0
  try {
    while (length < 200) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      length += value.length
    }
  } catch {
    // An unreadable error body says nothing more than the status.
  } finally {
    await reader.cancel().catch(() => {})
  }
  return Buffer.concat(chunks).toString('utf8', 0, Math.min(length, 200)).replace(/\s+/g, ' ').trim()
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

/** A network error as fetch reports it, with the underlying cause (ECONNREFUSED, ENOTFOUND, ...). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause as { code?: string; message?: string } | undefined
  const detail = cause?.code ?? cause?.message
  return detail && detail !== error.message ? `${error.message} (${detail})` : error.message
}
