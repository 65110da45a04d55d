import type { Readable } from 'node:stream'
import type { Tx } from '../db/transaction.js'

// Where exported feed files are kept (docs/design.md section 8): callers name files by key, never by
// path, so that the Postgres storage (the default: files in chunks, any process serves them) and
// the local directory (FEED_STORAGE=local, one process) are interchangeable. Every export writes under keys
// of its own (channel/pid/filename), so the file a reader is served never changes under it: the row
// that names the current key switches in one commit, and the keys it replaced are removed afterwards.

/** The key of one exported file: the channel, the run that exported it, its name. */
export function storageKeyOf(channelId: string, pid: string, filename: string): string {
  return `${channelId}/${pid}/${filename}`
}

/** The prefix every key of one run's export of one channel starts with (see removePrefix). */
export function exportKeyPrefix(channelId: string, pid: string): string {
  return `${channelId}/${pid}/`
}

/**
 * A file being written. Chunks go in one at a time (each accepted before the next is offered, so
 * nothing of a feed is held whole in memory); the file becomes visible at its key only when it is
 * published, and a writer that is abandoned leaves nothing behind.
 */
export interface FeedFileWriter {
  /** Appends a chunk; resolves when the next one may follow. */
  write(chunk: Buffer): Promise<void>
  /** The content is complete (flushed to its medium), but not yet visible at the key. */
  close(): Promise<void>
  /** Makes the closed file visible at its key: a reader sees the previous file there or this one, never half of one. */
  publish(): Promise<void>
  /** Removes whatever was written, published or not; never throws. */
  abandon(): Promise<void>
}

/** What a writer may need besides its key. */
export interface FeedWriteContext {
  /**
   * The export's transaction, for an implementation that keeps files in the database: its chunks are
   * then written, and become visible, with the rows that name them. Files kept elsewhere ignore it.
   */
  tx?: Tx
  /** The account the file belongs to, for a storage that records it. */
  accountId?: string
}

/** A file's two representations: as exported, and gzip-compressed once when it was written. */
export type FeedEncoding = 'identity' | 'gzip'

/** Bytes `start` to `end` of a file, both included (HTTP's byte ranges). */
export interface ByteRange {
  start: number
  end: number
}

/** A stored file opened for reading. */
export interface StoredFeed {
  /** Its size in bytes. */
  readonly size: number
  /**
   * Its content, or the bytes of `range`, once. The stream owns the opened file from here and
   * releases it when it ends or is destroyed.
   */
  stream(range?: ByteRange): Readable
  /** Releases the opened file without reading it. */
  close(): Promise<void>
}

export interface FeedStorage {
  /** Starts a new file at `key`. Fails before any chunk is written when the file cannot be created. */
  create(key: string, context?: FeedWriteContext): Promise<FeedFileWriter>
  /** Opens the file at `key` in one representation (a writer stores both), or undefined when there is none. */
  open(key: string, encoding?: FeedEncoding): Promise<StoredFeed | undefined>
  /** Removes the files at these keys; a key that has no file is fine. */
  remove(keys: readonly string[]): Promise<void>
  /** Removes every file whose key starts with `prefix` (an export's leftovers: `channel/pid/`). */
  removePrefix(prefix: string): Promise<void>
}
