import path from 'node:path'
import type { Config } from '../config.js'
import type { Db } from '../db/database.js'
import type { FeedStorage } from './feed-storage.js'
import { LocalFeedStorage } from './local-feed-storage.js'
import { PostgresFeedStorage } from './postgres-feed-storage.js'

/** The feed storage the configuration names (FEED_STORAGE): Postgres by default, or DATA_DIR/feeds. */
export function configuredFeedStorage(config: Pick<Config, 'FEED_STORAGE' | 'DATA_DIR'>, db: Db): FeedStorage {
  return config.FEED_STORAGE === 'local' ? new LocalFeedStorage(path.join(config.DATA_DIR, 'feeds')) : new PostgresFeedStorage(db)
}
