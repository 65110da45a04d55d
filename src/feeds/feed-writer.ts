import { createHash, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createWriteStream, type WriteStream } from 'node:fs'
import fs from 'node:fs/promises'
import type pg from 'pg'
import { to as copyTo } from 'pg-copy-streams'
import type { FeedFormat } from '../db/schema.js'
import { CopyTextDecoder } from './copy-text-decoder.js'
import { planFeed, type FeedMeta, type FeedRows } from './feed-sql.js'

export { contentTypeOf, isXmlName, type FeedRows } from './feed-sql.js'

export interface WrittenFeed {
  tmpPath: string
  bytes: number
  etag: string
}

/**
 * Streams the rows through COPY ... TO STDOUT into `<finalPath>.tmp-<random>`; the caller renames it
 * into place once its transaction commits (commitFeedFile) or removes it (discardFeedFile). Runs on
 * the caller's client, inside its transaction if it has one: nothing here begins or ends one.
 * Memory stays flat: each chunk goes to disk before the next one is read from the connection.
 */
export async function writeFeedFile(client: pg.PoolClient, rows: FeedRows, format: FeedFormat, finalPath: string, meta: FeedMeta): Promise<WrittenFeed> {
  const plan = planFeed(client, rows, format, meta)
  const tmpPath = `${finalPath}.tmp-${randomBytes(8).toString('hex')}`
  const sink = new FeedSink(tmpPath)
  try {
    // Fails here, before the COPY starts, when the file cannot be created.
    await sink.opened()
    await sink.write(Buffer.from(plan.header))
    const decoder = plan.textFormat ? new CopyTextDecoder() : null
    // A COPY stream that is destroyed half-read leaves the connection waiting forever (pg-copy-streams
    // stops reading it), so after a failure on our side the rest of the output is read and dropped:
    // the connection comes back usable and the caller's ROLLBACK can run.
    let failure: unknown
    for await (const chunk of client.query(copyTo(plan.copySql)) as AsyncIterable<Buffer>) {
      if (failure !== undefined) continue
      try {
        await sink.write(decoder ? decoder.decode(chunk) : chunk)
      } catch (error) {
        failure = error
      }
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

/** A file being written, with the byte count and hash of what went into it. */
class FeedSink {
  bytes = 0
  private readonly hash = createHash('sha256')
  private readonly stream: WriteStream
  private failure: Error | undefined

  constructor(private readonly path: string) {
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
