import { once } from 'node:events'
import { pipeline, Writable } from 'node:stream'
import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import type { FeedEncoding, FeedFileWriter, FeedStorage, FeedWriteContext, StoredFeed } from './feed-storage.js'
import { ChunkReader, decompressed, FEED_CHUNK_BYTES } from './postgres-feed-reader.js'
import { ParallelGzip } from './parallel-gzip.js'

export { FEED_CHUNK_BYTES } from './postgres-feed-reader.js'

// Feed files in Postgres (docs/design.md section 8), the default: any server process serves any feed, and
// a process that dies loses nothing. A file is kept once, as its gzip representation, in chunks of
// FEED_CHUNK_BYTES: gzip clients get the stored bytes, identity clients the same bytes decompressed
// on the fly (zlib inflates several times faster than it deflates), and a feed costs a tenth of
// its size in the database.
//
// Chunks are written through the pool, not the export's transaction: that transaction's connection
// is busy streaming the COPY the chunks come from. The file becomes visible at its key when its
// writer publishes it, just before the export commits the row that names the key; an export that
// fails abandons it, and the cleanup deletes what a crashed writer left (sweepFeedObjects).

export class PostgresFeedStorage implements FeedStorage {
  constructor(private readonly db: Db) {}

  async create(key: string, context: FeedWriteContext = {}): Promise<FeedFileWriter> {
    const { id } = await this.db
      .insertInto('feed_object')
      .values({ key, account_id: context.accountId ?? null })
      .returning('id')
      .executeTakeFirstOrThrow()
    return new PostgresFeedWriter(this.db, id, key)
  }

  async open(key: string, encoding: FeedEncoding = 'identity'): Promise<StoredFeed | undefined> {
    // The newest stored object: a file written twice at once (two processes) is the same content.
    const object = await this.db
      .selectFrom('feed_object')
      .select(['id', 'identity_bytes', 'gzip_bytes'])
      .where('key', '=', key)
      .where('state', '=', 'stored')
      .where('removed_at', 'is', null)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst()
    if (!object) return undefined
    const gzipBytes = Number(object.gzip_bytes)
    const whole = { start: 0, end: gzipBytes - 1 }
    // Nothing is held open between reads: a removed object stays readable until the cleanup deletes it.
    const close = async () => {}
    if (encoding === 'gzip') return { size: gzipBytes, stream: (range) => new ChunkReader(this.db, object.id, gzipBytes, range ?? whole), close }
    return { size: Number(object.identity_bytes), stream: (range) => decompressed(new ChunkReader(this.db, object.id, gzipBytes, whole), range), close }
  }

  async remove(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return
    await this.db
      .updateTable('feed_object')
      .set({ removed_at: sql`now()` })
      .where('key', 'in', [...keys])
      .where('removed_at', 'is', null)
      .execute()
  }

  async removePrefix(prefix: string): Promise<void> {
    // The empty prefix would be every file of every channel: never what a caller means.
    if (prefix === '' || prefix === '/') throw new Error('removePrefix needs a non-empty prefix')
    await this.db
      .updateTable('feed_object')
      .set({ removed_at: sql`now()` })
      .where('key', 'like', `${prefix.replace(/[\\%_]/g, '\\$&')}%`)
      .where('removed_at', 'is', null)
      .execute()
  }
}

/**
 * Deletes, with their chunks, the objects removed more than `removedMinutes` ago (a download that
 * opened one before has had that long) and those a writer left unpublished for `writingHours` (a
 * process that died while writing). Returns how many went.
 */
export async function sweepFeedObjects(db: Db, { removedMinutes = 60, writingHours = 24 } = {}): Promise<number> {
  let swept = 0
  for (;;) {
    // A few objects per statement: each takes its chunks (up to FEED_MAX_BYTES / 10 of them) along.
    const { numDeletedRows } = await db
      .deleteFrom('feed_object')
      .where(
        'id',
        'in',
        db
          .selectFrom('feed_object')
          .select('id')
          .where((eb) =>
            eb.or([
              eb('removed_at', '<', sql<Date>`now() - make_interval(mins => ${removedMinutes})`),
              eb.and([eb('state', '=', 'writing'), eb('created_at', '<', sql<Date>`now() - make_interval(hours => ${writingHours})`)]),
            ]),
          )
          .limit(20),
      )
      .executeTakeFirst()
    swept += Number(numDeletedRows)
    if (numDeletedRows === 0n) return swept
  }
}

/** One file being written: compressed in parallel blocks on libuv's thread pool (parallel-gzip.ts) and stored chunk by chunk as it comes. */
class PostgresFeedWriter implements FeedFileWriter {
  private readonly gzip = new ParallelGzip()
  private readonly sink: ChunkSink
  private readonly done: Promise<void>
  private failure: unknown
  private identityBytes = 0

  constructor(
    private readonly db: Db,
    private readonly id: string,
    private readonly key: string,
  ) {
    this.sink = new ChunkSink(db, id)
    this.done = new Promise((resolve, reject) => pipeline(this.gzip, this.sink, (error) => (error ? reject(error) : resolve())))
    this.done.catch((error: unknown) => {
      this.failure ??= error
    })
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.failure) throw this.failure
    if (chunk.length === 0) return
    this.identityBytes += chunk.length
    // A failed insert destroys the pipeline: `done` rejects where 'drain' would never come.
    if (!this.gzip.write(chunk)) await Promise.race([once(this.gzip, 'drain'), this.done])
  }

  async close(): Promise<void> {
    if (this.failure) throw this.failure
    this.gzip.end()
    await this.done
  }

  /** The file is visible at its key from here; an older object of the key (the same file written again) retires. */
  async publish(): Promise<void> {
    await this.db
      .updateTable('feed_object')
      .set({ state: 'stored', identity_bytes: String(this.identityBytes), gzip_bytes: String(this.sink.bytes) })
      .where('id', '=', this.id)
      .execute()
    await this.db
      .updateTable('feed_object')
      .set({ removed_at: sql`now()` })
      .where('key', '=', this.key)
      .where('id', '<', this.id)
      .where('removed_at', 'is', null)
      .execute()
  }

  async abandon(): Promise<void> {
    this.gzip.destroy()
    this.sink.destroy()
    // The chunks go with it (ON DELETE CASCADE); whatever fails here, the sweep deletes later.
    await this.db
      .deleteFrom('feed_object')
      .where('id', '=', this.id)
      .execute()
      .catch(() => {})
  }
}

/** Cuts the compressed bytes into chunks of FEED_CHUNK_BYTES and inserts each one before taking more. */
class ChunkSink extends Writable {
  bytes = 0
  private seq = 0
  private pending: Buffer[] = []
  private pendingBytes = 0

  constructor(
    private readonly db: Db,
    private readonly objectId: string,
  ) {
    super()
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.pending.push(chunk)
    this.pendingBytes += chunk.length
    this.bytes += chunk.length
    if (this.pendingBytes < FEED_CHUNK_BYTES) return callback()
    this.insertFull().then(() => callback(), callback)
  }

  override _final(callback: (error?: Error | null) => void): void {
    const last = this.pendingBytes > 0 ? this.insert(Buffer.concat(this.pending, this.pendingBytes)) : Promise.resolve()
    last.then(() => callback(), callback)
  }

  private async insertFull(): Promise<void> {
    while (this.pendingBytes >= FEED_CHUNK_BYTES) {
      const all = Buffer.concat(this.pending, this.pendingBytes)
      const rest = all.subarray(FEED_CHUNK_BYTES)
      await this.insert(all.subarray(0, FEED_CHUNK_BYTES))
      this.pending = rest.length > 0 ? [rest] : []
      this.pendingBytes = rest.length
    }
  }

  private async insert(data: Buffer): Promise<void> {
    await this.db.insertInto('feed_chunk').values({ object_id: this.objectId, seq: this.seq++, data }).execute()
  }
}
