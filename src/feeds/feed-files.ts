import type { Db, DbHandle } from '../db/database.js'
import { NotFoundError } from '../errors.js'
import { materialiseFeedFile, type MaterialiseGate } from './feed-materialiser.js'
import { openPendingFeed } from './pending-feed.js'
import type { FeedEncoding, FeedStorage, StoredFeed } from './feed-storage.js'

// The files of the built-in destination as its public route serves them: the row that names a
// file's current key, and its content from the storage.

/** What a feed URL's file is served with. */
export interface PublicFeedFile {
  accountId: string
  storageKey: string
  contentType: string
  etag: string
  writtenAt: Date
  /** Recorded by its export, written on its first download (feed-materialiser.ts). */
  pending: boolean
  /** Its identity size, as its export recorded it. */
  bytes: number
}

/**
 * The current file `filename` of the channel whose active feed destination has `token`. No account
 * filter: the token is the only credential of a public feed URL, and it names one account's channel.
 */
export async function findPublicFeedFile(db: DbHandle, token: string, filename: string): Promise<PublicFeedFile | undefined> {
  const file = await db
    .selectFrom('channel_destination as d')
    .innerJoin('feed_file as f', (join) => join.onRef('f.channel_id', '=', 'd.channel_id').onRef('f.account_id', '=', 'd.account_id'))
    .select(['f.account_id', 'f.storage_key', 'f.content_type', 'f.etag', 'f.written_at', 'f.pending', 'f.bytes'])
    .where('d.token', '=', token)
    .where('d.kind', '=', 'feed')
    .where('d.active', '=', true)
    .where('f.filename', '=', filename)
    .executeTakeFirst()
  return (
    file && {
      accountId: file.account_id,
      storageKey: file.storage_key,
      contentType: file.content_type,
      etag: file.etag,
      writtenAt: file.written_at,
      pending: file.pending,
      bytes: Number(file.bytes),
    }
  )
}

/** A feed URL that names no file; the client just has no file, whichever of the reasons below. */
export class FeedFileNotFoundError extends NotFoundError {
  constructor(filename: string) {
    super(`No feed file ${filename} at this address`)
  }
}

/**
 * A row names the file but the storage has none in the representation asked for (every export
 * stores both): worth a look by an operator (the route logs it).
 */
export class FeedContentMissingError extends FeedFileNotFoundError {
  constructor(
    filename: string,
    readonly storageKey: string,
    readonly encoding: FeedEncoding,
  ) {
    super(filename)
  }
}

/** What a feed URL's file is opened for. */
export interface PublicFeedRequest {
  token: string
  filename: string
  encoding: FeedEncoding
  gate?: MaterialiseGate
  /**
   * The whole identity file is wanted (a GET without a range): a full file not written yet is then
   * served from its lines as they are read, and written afterwards (pending-feed.ts).
   */
  whole?: boolean
}

/**
 * The file a feed URL names, opened in `encoding`; the caller reads or closes `content`. A full
 * file not written yet is written first (or served from its lines); should a newer export
 * replace it meanwhile, the newer one is served (written in turn).
 */
export async function openPublicFeed(db: Db, storage: FeedStorage, request: PublicFeedRequest): Promise<{ file: PublicFeedFile; content: StoredFeed }> {
  const { token, filename, encoding, gate } = request
  for (let attempt = 1; ; attempt++) {
    const file = await findPublicFeedFile(db, token, filename)
    if (!file) throw new FeedFileNotFoundError(filename)
    if (file.pending && request.whole && encoding === 'identity') {
      const live = await openPendingFeed(db, storage, file, gate)
      if (live) return { file, content: live }
    }
    if (file.pending) await materialiseFeedFile(db, storage, file, gate)
    const content = await storage.open(file.storageKey, encoding)
    if (content) return { file, content }
    // Replaced by a newer export between reading the row and opening the file: read the row again.
    // A full file the storage lost is written again from the stage; a delta file cannot be.
    if (attempt === 3) throw new FeedContentMissingError(filename, file.storageKey, encoding)
    if (attempt === 2) await materialiseFeedFile(db, storage, file, gate, { rewrite: true })
  }
}
