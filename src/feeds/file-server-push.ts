import { randomBytes } from 'node:crypto'
import path from 'node:path'
import type { FileCredentials, FileServerSettings } from '../db/schema.js'
import type { SendResult } from './http-push.js'

// What the SFTP and FTPS uploads share: the target, the answer of one attempt, the
// temporary name a file is uploaded under before it is renamed into place, and a deadline.

/** A file server to upload to: its settings, its opened credentials, and the address the outbound guard checked. */
export interface FileServerTarget {
  settings: FileServerSettings
  credentials: FileCredentials
  /** Connected to instead of the host name, so that no later lookup can point elsewhere. */
  address: string
}

/** One attempt's outcome: what arrived where, or why not (SendResult's kinds; `retry` only for the network's failures). */
export type DeliveryResult = { ok: true; bytes: number; remotePath: string } | (Extract<SendResult, { ok: false }> & { remotePath?: string })

export interface DeliveryOptions {
  /** Limit of the whole attempt: connection, login, upload, rename. */
  timeoutMs: number
  /** Aborts the attempt (the server is shutting down). */
  signal?: AbortSignal
  /** A destination's test: the file is removed again once it is in place. */
  removeAfter?: boolean
  /**
   * Names the temporary file (a push's id): every attempt of a push writes the same one, so that a
   * retry after a connection that dropped mid-upload overwrites what it left, and the rename takes it.
   */
  uploadTag?: string
}

/** Where the file goes, and where it is written first (a dot file the receiver's pickup skips). */
export function remotePaths(settings: FileServerSettings, filename: string, tag = randomBytes(6).toString('hex')): { final: string; upload: string } {
  const directory = settings.directory === '' ? '.' : settings.directory
  const final = path.posix.join(directory, filename)
  if (!settings.temp_rename) return { final, upload: final }
  return { final, upload: path.posix.join(directory, temporaryName(filename, tag)) }
}

// The most bytes a file name may have on the file systems servers use; the channel's file names
// keep to it (channel-settings.ts), and so must the temporary name that adds a tag to one.
const MAX_NAME_BYTES = 255

/** `.<filename>.<tag>.part`, the file name cut (at a character) to keep it within MAX_NAME_BYTES. */
function temporaryName(filename: string, tag: string): string {
  const suffix = `.${tag}.part`
  const room = MAX_NAME_BYTES - 1 - Buffer.byteLength(suffix)
  const characters = [...filename]
  while (Buffer.byteLength(characters.join('')) > room) characters.pop()
  return `.${characters.join('')}${suffix}`
}

export function failure(kind: Extract<SendResult, { ok: false }>['kind'], error: string, retry: boolean, remotePath?: string): DeliveryResult {
  return { ok: false, kind, error, retry, ...(remotePath !== undefined && { remotePath }) }
}

/**
 * Runs `work` until it ends, the deadline passes or `signal` aborts; then `stop` ends the
 * connection (which ends `work` too) and the outcome says which.
 */
export async function withinDeadline(options: DeliveryOptions, stop: () => void, work: () => Promise<DeliveryResult>): Promise<DeliveryResult> {
  let timer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const cut = new Promise<DeliveryResult>((resolve) => {
    timer = setTimeout(() => resolve(failure('timeout', `no answer within ${Math.round(options.timeoutMs / 1000)} s`, true)), options.timeoutMs)
    onAbort = () => resolve(failure('aborted', 'the attempt was stopped: the server sending it is shutting down', true))
    options.signal?.addEventListener('abort', onAbort, { once: true })
  })
  const working = work().catch((error: unknown) => failure('unreachable', (error as Error).message, true))
  try {
    const outcome = await Promise.race([working, cut])
    if (!outcome.ok && (outcome.kind === 'timeout' || outcome.kind === 'aborted')) stop()
    return outcome
  } finally {
    clearTimeout(timer)
    if (onAbort) options.signal?.removeEventListener('abort', onAbort)
  }
}

/** The network's reason in the service's words, never more of the server's text than its error code. */
export function networkReason(code: string | undefined, message: string | undefined): string {
  if (code === 'ECONNREFUSED') return 'the connection was refused'
  if (code === 'ECONNRESET' || /reset|closed|end/i.test(message ?? '')) return 'the server closed the connection'
  if (code === 'ETIMEDOUT' || /timed? ?out/i.test(message ?? '')) return 'no answer in time'
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'the host is unreachable'
  return code ?? 'the connection failed'
}
