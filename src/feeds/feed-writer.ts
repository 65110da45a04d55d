import { createHash, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createWriteStream, type WriteStream } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import type pg from 'pg'
import { to as copyTo } from 'pg-copy-streams'
import type { FeedFormat } from '../db/schema.js'
import { CopyTextDecoder } from './copy-text-decoder.js'
import { planFeed, type FeedMeta, type FeedRows } from './feed-sql.js'

export { contentTypeOf, isXmlName, unwritableColumns, UnwritableColumnsError, type FeedRows, type UnwritableColumns } from './feed-sql.js'

/** What one file may cost. */
export interface FeedBudget {
  /** The largest file, header and footer included (FEED_MAX_BYTES): a stage of many columns times many rows multiplies. */
  maxBytes: number
  /**
   * Cancels the statement of the Postgres backend with this pid. Called once the file has failed
   * (over the budget, a disk error), so that Postgres stops producing output only to be dropped.
   */
  cancel?: (backendPid: number) => Promise<void>
}

/** A file that would pass its budget: nothing of it is kept. */
export class FeedTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the file would pass ${maxBytes} bytes`)
    this.name = 'FeedTooLargeError'
  }
}

export interface WrittenFeed {
  tmpPath: string
  bytes: number
  etag: string
}

/**
 * Streams the rows through COPY ... TO STDOUT into `.tmp-<random>-<name>` beside `finalPath` (the
 * name cut short, so that any final name the file system takes has a temporary one); the caller renames it
 * into place once its transaction commits (commitFeedFile) or removes it (discardFeedFile). Runs on
 * the caller's client, inside its transaction if it has one: nothing here begins or ends one.
 * Memory stays flat: each chunk goes to disk before the next one is read from the connection, and
 * disk use is bounded: the write stops as soon as the file would pass `budget.maxBytes`.
 */
export async function writeFeedFile(client: pg.PoolClient, rows: FeedRows, format: FeedFormat, finalPath: string, meta: FeedMeta, budget: FeedBudget = { maxBytes: Infinity }): Promise<WrittenFeed> {
  const plan = planFeed(client, rows, format, meta)
  const tmpPath = path.join(path.dirname(finalPath), `.tmp-${randomBytes(8).toString('hex')}-${path.basename(finalPath).slice(0, 200)}`)
  const sink = new FeedSink(tmpPath, budget.maxBytes)
  try {
    // Fails here, before the COPY starts, when the file cannot be created.
    await sink.opened()
    await sink.write(Buffer.from(plan.header))
    const decoder = plan.textFormat ? new CopyTextDecoder() : null
    const backendPid = budget.cancel ? await backendPidOf(client) : undefined
    // A COPY stream that is destroyed half-read leaves the connection waiting forever (pg-copy-streams
    // stops reading it), so after a failure on our side the COPY is cancelled and what Postgres sent
    // until then is read and dropped: the connection comes back usable and the caller's ROLLBACK can run.
    let failure: unknown
    let cancelling: Promise<void> | undefined
    try {
      for await (const chunk of client.query(copyTo(plan.copySql)) as AsyncIterable<Buffer>) {
        if (failure !== undefined) continue
        try {
          await sink.write(decoder ? decoder.decode(chunk) : chunk)
        } catch (error) {
          failure = error
          if (backendPid !== undefined) cancelling = budget.cancel?.(backendPid).catch(() => {})
        }
      }
    } catch (error) {
      // After our own failure, the COPY's error is the cancel we asked for: ours says why.
      if (failure === undefined) throw error
    } finally {
      // The cancel is delivered before the caller's next statement, which it could otherwise hit.
      await cancelling
    }
    if (failure !== undefined) throw failure
    decoder?.end()
    await sink.write(Buffer.from(plan.footer))
    await sink.close()
    return { tmpPath, bytes: sink.bytes, etag: sink.etag() }
  } catch (error) {
    await sink.abandon()
    throw error
  }
}

/** Moves the file to its final name: a rename, so a reader sees the old file or the new one, never half of one. */
export async function commitFeedFile(written: WrittenFeed, finalPath: string): Promise<void> {
  await fs.rename(written.tmpPath, finalPath)
}

export async function discardFeedFile(written: WrittenFeed): Promise<void> {
  await fs.rm(written.tmpPath, { force: true })
}

async function backendPidOf(client: pg.PoolClient): Promise<number | undefined> {
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
  return rows[0]?.pid
}

/** A file being written, with the byte count and hash of what went into it. */
class FeedSink {
  bytes = 0
  private readonly hash = createHash('sha256')
  private readonly stream: WriteStream
  private failure: Error | undefined

  constructor(
    private readonly path: string,
    private readonly maxBytes: number,
  ) {
    // `wx`: never write into a file someone else has; `flush`: data on disk before the rename.
    this.stream = createWriteStream(path, { flags: 'wx', flush: true })
    this.stream.on('error', (error) => {
      this.failure ??= error
    })
  }

  async opened(): Promise<void> {
    if (this.stream.pending) await once(this.stream, 'open')
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.failure) throw this.failure
    if (chunk.length === 0) return
    if (this.bytes + chunk.length > this.maxBytes) throw new FeedTooLargeError(this.maxBytes)
    this.hash.update(chunk)
    this.bytes += chunk.length
    // `once` rejects on 'error', so a failing disk ends the wait.
    if (!this.stream.write(chunk)) await once(this.stream, 'drain')
  }

  async close(): Promise<void> {
    if (this.failure) throw this.failure
    const closed = once(this.stream, 'close')
    this.stream.end()
    await closed
    if (this.failure) throw this.failure
  }

  /** A strong ETag: the first 128 bits of the content's SHA-256. */
  etag(): string {
    return `"${this.hash.digest('hex').slice(0, 32)}"`
  }

  async abandon(): Promise<void> {
    if (!this.stream.closed) {
      const closed = once(this.stream, 'close').catch(() => {})
      this.stream.destroy()
      await closed
    }
    await fs.rm(this.path, { force: true })
  }
}
