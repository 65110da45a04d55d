import { pipeline, Readable } from 'node:stream'
import { createGunzip } from 'node:zlib'
import { to as copyTo } from 'pg-copy-streams'
import { poolOf, type Db } from '../db/database.js'
import { CopyBinaryLines } from './copy-binary-lines.js'
import type { ByteRange } from './feed-storage.js'

// Reading a feed file kept by PostgresFeedStorage: its gzip chunks a few at a time, a byte range
// from the chunks that hold it, or the identity bytes inflated on the fly.

/** The size of every chunk of a file but its last. */
export const FEED_CHUNK_BYTES = 1024 * 1024

// Chunks fetched per statement while a file is read: a download holds no connection between them.
const CHUNKS_PER_READ = 4

/** The stored bytes `range` of one object (`size` bytes in all), read a few chunks at a time as the consumer takes them. */
export class ChunkReader extends Readable {
  private next: number
  private readonly last: number

  constructor(
    private readonly db: Db,
    private readonly objectId: string,
    private readonly size: number,
    private readonly range: ByteRange,
  ) {
    super({ highWaterMark: FEED_CHUNK_BYTES })
    this.next = Math.floor(range.start / FEED_CHUNK_BYTES)
    this.last = Math.floor(range.end / FEED_CHUNK_BYTES)
  }

  // The next few chunks, fetched while the consumer takes the ones before (at most two batches in memory).
  private ahead: Promise<Buffer[]> | undefined

  override _read(): void {
    if (this.next > this.last) {
      this.push(null)
      return
    }
    const from = this.next
    const to = Math.min(this.last, from + CHUNKS_PER_READ - 1)
    this.next = to + 1
    const batch = this.ahead ?? readChunks(this.db, this.objectId, from, to)
    this.ahead = undefined
    batch
      .then((pieces) => {
        const expected = Math.min((to + 1) * FEED_CHUNK_BYTES, this.size) - from * FEED_CHUNK_BYTES
        // Deleted under a reader that outlived the sweep's grace: an error, never a short file.
        if (pieces.reduce((sum, piece) => sum + piece.length, 0) !== expected) throw new Error(`feed object ${this.objectId} lost chunks of ${from}-${to}`)
        if (this.next <= this.last && !this.destroyed) {
          const ahead = readChunks(this.db, this.objectId, this.next, Math.min(this.last, this.next + CHUNKS_PER_READ - 1))
          // Its failure is reported when its turn comes.
          ahead.catch(() => {})
          this.ahead = ahead
        }
        let position = from * FEED_CHUNK_BYTES
        for (const piece of pieces) {
          const start = Math.max(0, this.range.start - position)
          const end = Math.min(piece.length, this.range.end - position + 1)
          position += piece.length
          if (end > start) this.push(piece.subarray(start, end))
        }
        if (this.next > this.last) this.push(null)
      })
      .catch((error: unknown) => this.destroy(error instanceof Error ? error : new Error(String(error))))
  }
}

/**
 * Chunks `from` to `to` of an object, back to back. Binary COPY: the bytes arrive as they are stored,
 * where a query's bytea result would come as hex text for pg to decode (measured: 20 ms per MiB, a
 * core's worth of work for every few downloads). The connection is held for these few chunks only.
 */
async function readChunks(db: Db, objectId: string, from: number, to: number): Promise<Buffer[]> {
  // A COPY statement takes no parameters: only numbers go in.
  if (!/^\d+$/.test(objectId) || !Number.isInteger(from) || !Number.isInteger(to)) throw new Error('feed chunks are named by numbers')
  const client = await poolOf(db).connect()
  let failed: Error | undefined
  try {
    const decoder = new CopyBinaryLines({ newlines: false })
    const pieces: Buffer[] = []
    const copy = client.query(
      copyTo(`COPY (SELECT data FROM feed_chunk WHERE object_id = ${objectId} AND seq BETWEEN ${from} AND ${to} ORDER BY seq) TO STDOUT (FORMAT binary)`),
    )
    for await (const chunk of copy as AsyncIterable<Buffer>) pieces.push(...decoder.decode(chunk))
    decoder.end()
    return pieces
  } catch (error) {
    failed = error instanceof Error ? error : new Error(String(error))
    throw error
  } finally {
    // A connection whose COPY failed midway is not reused.
    client.release(failed)
  }
}

/** The identity bytes of a gzip stream, or the bytes `range` of them (inflated from the start, cut to the range). */
export function decompressed(compressed: Readable, range?: ByteRange): Readable {
  const gunzip = createGunzip({ chunkSize: 256 * 1024 })
  // pipeline destroys the chunk reader when the consumer goes away or inflating fails.
  pipeline(compressed, gunzip, () => {})
  return range ? Readable.from(slice(gunzip, range)) : gunzip
}

async function* slice(source: Readable, { start, end }: ByteRange): AsyncGenerator<Buffer> {
  let position = 0
  // Leaving the loop (the range is complete, or the consumer went away) destroys the source.
  for await (const chunk of source as AsyncIterable<Buffer>) {
    const from = Math.max(0, start - position)
    const to = Math.min(chunk.length, end - position + 1)
    position += chunk.length
    if (to > from) yield chunk.subarray(from, to)
    if (position > end) return
  }
}
