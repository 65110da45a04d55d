import { pipeline, Readable } from 'node:stream'
import { createGunzip } from 'node:zlib'
import type { Db } from '../db/database.js'
import type { ByteRange } from './feed-storage.js'

// Reading a feed file kept by PostgresFeedStorage: its gzip chunks a few at a time, a byte range
// from the chunks that hold it, or the identity bytes inflated on the fly.

/** The size of every chunk of a file but its last. */
export const FEED_CHUNK_BYTES = 1024 * 1024

// Chunks fetched per query while a file is read: a download holds no connection between queries.
const CHUNKS_PER_READ = 2

/** The stored bytes `range` of one object, read a few chunks per query as the consumer takes them. */
export class ChunkReader extends Readable {
  private next: number
  private readonly last: number

  constructor(
    private readonly db: Db,
    private readonly objectId: string,
    private readonly range: ByteRange,
  ) {
    super({ highWaterMark: FEED_CHUNK_BYTES })
    this.next = Math.floor(range.start / FEED_CHUNK_BYTES)
    this.last = Math.floor(range.end / FEED_CHUNK_BYTES)
  }

  override _read(): void {
    if (this.next > this.last) {
      this.push(null)
      return
    }
    const from = this.next
    const to = Math.min(this.last, from + CHUNKS_PER_READ - 1)
    this.next = to + 1
    readChunks(this.db, this.objectId, from, to)
      .then((chunks) => {
        // Deleted under a reader that outlived the sweep's grace: an error, never a short file.
        if (chunks.length !== to - from + 1) throw new Error(`feed object ${this.objectId} lost chunks ${from}-${to}`)
        chunks.forEach((data, index) => {
          const offset = (from + index) * FEED_CHUNK_BYTES
          this.push(data.subarray(Math.max(0, this.range.start - offset), Math.min(data.length, this.range.end - offset + 1)))
        })
        if (this.next > this.last) this.push(null)
      })
      .catch((error: unknown) => this.destroy(error instanceof Error ? error : new Error(String(error))))
  }
}

async function readChunks(db: Db, objectId: string, from: number, to: number): Promise<Buffer[]> {
  // Text results (bytea in hex, decoded by pg in native code): pg decodes every field of a binary
  // result as UTF-8 text first, which would mangle compressed bytes.
  const rows = await db
    .selectFrom('feed_chunk')
    .select('data')
    .where('object_id', '=', objectId)
    .where('seq', '>=', from)
    .where('seq', '<=', to)
    .orderBy('seq')
    .execute()
  return rows.map((row) => row.data)
}

/** The identity bytes of a gzip stream, or the bytes `range` of them (inflated from the start, cut to the range). */
export function decompressed(compressed: Readable, range?: ByteRange): Readable {
  const gunzip = createGunzip()
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
