import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { Transform, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { FetchedSourceSettings, SourceCredentials, SourceFetchState } from '../db/schema.js'
import type { OutboundGuard } from '../net/outbound-guard.js'

// What the transports of a source's fetch (http-source-fetch.ts, sftp-source-fetch.ts) share: the
// source and its budget, the error a fetch fails with, and the counted write to local disk.

/** Why a fetch failed, in the service's own words: shown on the site's errors and the source. */
export class SourceFetchError extends Error {}

export interface FetchBudget {
  /** Bytes of the file as sent (compressed when it is): more fail the fetch. */
  maxBytes: number
  /** When the whole fetch (and the reading after it) must be over, as Date.now() counts. */
  deadline: number
  /** The limit that set the deadline (SOURCE_FETCH_TIMEOUT_SECONDS), for messages. */
  limitSeconds: number
  /** A feed URL's server that sends nothing for this long is given up on (an SFTP download is bounded by the deadline). */
  idleMs: number
}

export interface SourceToFetch {
  settings: FetchedSourceSettings
  credentials: SourceCredentials
  /** What the last fetch that read the file found: validators, size and time, digest. */
  state: SourceFetchState | null
  guard: OutboundGuard
  budget: FetchBudget
}

/** What a transport hands back: the bytes written, their digest, and what tells a changed file next time. */
export interface WrittenFile {
  bytes: number
  sha256: string
  state: SourceFetchState
  /** The charset the server declared for it (an HTTP Content-Type's), if any. */
  charset?: string
}

/**
 * Writes `body` to `target`, counting and hashing as it goes: past `maxBytes` the fetch fails. The
 * caller's deadline and idle timer destroy `body`, which ends this with their error.
 */
export async function writeCounted(body: Readable, target: string, maxBytes: number): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256')
  let bytes = 0
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length
      if (bytes > maxBytes) return done(new SourceFetchError(`the file is larger than ${maxBytes} bytes (SOURCE_MAX_BYTES)`))
      hash.update(chunk)
      done(null, chunk)
    },
  })
  await pipeline(body, counter, createWriteStream(target))
  return { bytes, sha256: hash.digest('hex') }
}

/** The digest of a file on disk (an SFTP download, which arrives in parallel pieces). */
export async function digestOf(file: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

/** The failure of a fetch past its deadline. */
export function pastDeadline(budget: FetchBudget): SourceFetchError {
  return new SourceFetchError(`the source did not finish within ${budget.limitSeconds} s (SOURCE_FETCH_TIMEOUT_SECONDS)`)
}
