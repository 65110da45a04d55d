import { guardedPost, type PostBody } from '../net/guarded-post.js'
import type { OutboundGuard } from '../net/outbound-guard.js'
import type { FeedStorage } from './feed-storage.js'

export interface PushFile {
  /** Where the file is kept, and its key there. */
  storage: Pick<FeedStorage, 'open'>
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
 * What one attempt came to. `error` says what failed in the service's own words (src/net/guarded-post.ts):
 * nothing a remote server sends — body, reason phrase, headers — ever reaches it.
 */
export type SendResult =
  { ok: true } | { ok: false; kind: 'status' | 'timeout' | 'unreachable' | 'refused' | 'missing' | 'aborted'; error: string; retry: boolean }

/**
 * POSTs a file, streamed from its storage, to an http destination, once (guardedPost: redirects are
 * never followed, the address connected to is the one the outbound guard checked). The file is
 * opened only for a URL the guard lets through. Never throws.
 */
export async function sendFile(url: string, file: PushFile, options: SendOptions): Promise<SendResult> {
  const result = await guardedPost({
    url,
    headers: { 'content-type': file.contentType, 'content-disposition': contentDisposition(file.filename) },
    body: () => openPushFile(file),
    ...options,
  })
  if (result.ok) return { ok: true }
  const { kind, error, retry } = result
  if (kind === 'no body') return { ok: false, kind: 'missing', error: `the file ${file.filename} is no longer there`, retry: false }
  if (kind === 'unreadable body') return { ok: false, kind: 'missing', error: `the file ${file.filename} could not be read`, retry: false }
  return { ok: false, kind, error, retry }
}

/** The file as a body, or undefined when it is not there (a newer export replaced it, say). Every kind of push reads it so. */
export async function openPushFile(file: PushFile): Promise<Exclude<PostBody, Buffer> | undefined> {
  const stored = await file.storage.open(file.key)
  return stored && { stream: stored.stream(), size: stored.size }
}

/**
 * `attachment` with the name quoted; a non-ASCII name also goes in `filename*` (RFC 6266). Not the
 * `content-disposition` package: it writes Latin-1 letters raw into `filename=`, which receivers
 * decode differently (as Latin-1 or as UTF-8); here `filename=` holds ASCII only and `filename*` the name.
 */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '\\$&')
  const header = `attachment; filename="${ascii}"`
  if (/^[\x20-\x7e]*$/.test(filename)) return header
  // RFC 5987 value characters: encodeURIComponent leaves ' ( ) * as they are, which it does not allow.
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `${header}; filename*=UTF-8''${encoded}`
}
