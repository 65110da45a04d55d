import type { DbHandle } from '../db/database.js'
import { NotFoundError } from '../errors.js'
import type { FeedEncoding, FeedStorage, StoredFeed } from './feed-storage.js'

// The files of the built-in destination as its public route serves them: the row that names a
// file's current key, and its content from the storage.

/** What a feed URL's file is served with. */
export interface PublicFeedFile {
  storageKey: string
  contentType: string
  etag: string
  writtenAt: Date
}

/**
 * The current file `filename` of the channel whose active feed destination has `token`. No account
 * filter: the token is the only credential of a public feed URL, and it names one account's channel.
 */
export async function findPublicFeedFile(db: DbHandle, token: string, filename: string): Promise<PublicFeedFile | undefined> {
  const file = await db
    .selectFrom('channel_destination as d')
    .innerJoin('feed_file as f', (join) => join.onRef('f.channel_id', '=', 'd.channel_id').onRef('f.account_id', '=', 'd.account_id'))
    .select(['f.storage_key', 'f.content_type', 'f.etag', 'f.written_at'])
    .where('d.token', '=', token)
    .where('d.kind', '=', 'feed')
    .where('d.active', '=', true)
    .where('f.filename', '=', filename)
    .executeTakeFirst()
  return file && { storageKey: file.storage_key, contentType: file.content_type, etag: file.etag, writtenAt: file.written_at }
}

/** A feed URL that names no file; the client just has no file, whichever of the reasons below. */
export class FeedFileNotFoundError extends NotFoundError {
  constructor(filename: string) {
    super(`No feed file ${filename} at this address`)
  }
}

/** A row names the file but the storage has none: worth a look by an operator (the route logs it). */
export class FeedContentMissingError extends FeedFileNotFoundError {
  constructor(
    filename: string,
    readonly storageKey: string,
  ) {
    super(filename)
  }
}

/**
 * The file a feed URL names, opened in the representation asked for if the storage has it, else as
 * exported (`encoding` says which was opened); the caller reads or closes `content`.
 */
export async function openPublicFeed(
  db: DbHandle,
  storage: FeedStorage,
  token: string,
  filename: string,
  wanted: FeedEncoding = 'identity',
): Promise<{ file: PublicFeedFile; content: StoredFeed; encoding: FeedEncoding }> {
  const file = await findPublicFeedFile(db, token, filename)
  if (!file) throw new FeedFileNotFoundError(filename)
  const preferred = wanted === 'gzip' ? await storage.open(file.storageKey, 'gzip') : undefined
  if (preferred) return { file, content: preferred, encoding: 'gzip' }
  const content = await storage.open(file.storageKey)
  if (!content) throw new FeedContentMissingError(filename, file.storageKey)
  return { file, content, encoding: 'identity' }
}
