import { buffer } from 'node:stream/consumers'
import { gunzipSync } from 'node:zlib'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FeedEncoding } from '../../src/feeds/feed-storage.js'
import { FEED_CHUNK_BYTES, PostgresFeedStorage, sweepFeedObjects } from '../../src/feeds/postgres-feed-storage.js'
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js'

let database: TestDatabase
let storage: PostgresFeedStorage

beforeAll(async () => {
  database = await createTestDatabase()
  storage = new PostgresFeedStorage(database.db)
})

afterAll(async () => {
  await database?.drop()
})

/**
 * Lines that do not repeat, so that the compressed file spans several chunks (the tests check that
 * it spans more than two).
 */
function feedText(lines: number, seed = 1): Buffer {
  const parts: string[] = []
  let state = seed
  for (let i = 0; i < lines; i++) {
    state = (state * 1103515245 + 12345) % 2 ** 31
    parts.push(`${i},${state.toString(36)},${(state * 7919).toString(16)},${Math.sqrt(state + i)}\n`)
  }
  return Buffer.from(parts.join(''))
}

async function write(key: string, content: Buffer, pieces = 7): Promise<void> {
  const writer = await storage.create(key, { accountId: '1' })
  const step = Math.ceil(content.length / pieces)
  for (let at = 0; at < content.length; at += step) await writer.write(content.subarray(at, at + step))
  await writer.close()
  await writer.publish()
}

async function read(key: string, encoding: FeedEncoding = 'identity', range?: { start: number; end: number }): Promise<Buffer | undefined> {
  const stored = await storage.open(key, encoding)
  return stored && buffer(stored.stream(range))
}

async function objectsOf(keyPrefix: string) {
  return database.db
    .selectFrom('feed_object')
    .select(['id', 'state', 'removed_at', sql<number>`(SELECT count(*) FROM feed_chunk c WHERE c.object_id = feed_object.id)::int`.as('chunks')])
    .where('key', 'like', `${keyPrefix}%`)
    .orderBy('id')
    .execute()
}

describe('PostgresFeedStorage', () => {
  const content = feedText(150_000)

  it('stores a file once, as gzip in chunks, and serves it whole in either representation, only once published', async () => {
    const key = '11/run-1/feed.csv'
    const writer = await storage.create(key, { accountId: '1' })
    await writer.write(content)
    await writer.close()
    expect(await storage.open(key)).toBeUndefined()
    await writer.publish()

    const gzip = await storage.open(key, 'gzip')
    const identity = await storage.open(key, 'identity')
    expect(identity?.size).toBe(content.length)
    const compressed = await buffer(gzip!.stream())
    expect(compressed.length).toBe(gzip?.size)
    expect(compressed.length).toBeLessThan(content.length)
    expect(gunzipSync(compressed).equals(content)).toBe(true)
    expect((await buffer(identity!.stream())).equals(content)).toBe(true)
    const [object] = await objectsOf(key)
    expect(object?.chunks).toBe(Math.ceil(compressed.length / FEED_CHUNK_BYTES))
    expect(object?.chunks).toBeGreaterThan(1)
  })

  it('serves byte ranges of both representations, across chunk boundaries', async () => {
    const key = '11/run-2/feed.csv'
    await write(key, content)
    const compressed = (await read(key, 'gzip'))!
    expect(compressed.length).toBeGreaterThan(2 * FEED_CHUNK_BYTES + 10)
    const gzipRanges = [
      { start: 0, end: 0 },
      { start: FEED_CHUNK_BYTES - 3, end: FEED_CHUNK_BYTES + 2 },
      { start: FEED_CHUNK_BYTES, end: 2 * FEED_CHUNK_BYTES + 10 },
      { start: compressed.length - 5, end: compressed.length - 1 },
    ]
    for (const range of gzipRanges)
      expect((await read(key, 'gzip', range))?.equals(compressed.subarray(range.start, range.end + 1)), JSON.stringify(range)).toBe(true)
    const identityRanges = [
      { start: 0, end: 9 },
      { start: 1_000_000, end: 3_000_000 },
      { start: content.length - 1, end: content.length - 1 },
    ]
    for (const range of identityRanges)
      expect((await read(key, 'identity', range))?.equals(content.subarray(range.start, range.end + 1)), JSON.stringify(range)).toBe(true)
  })

  it('keeps a removed file readable by a download that opened it, until the sweep deletes it', async () => {
    const key = '12/run-1/feed.csv'
    await write(key, content)
    const opened = await storage.open(key)
    await storage.remove([key])
    expect(await storage.open(key)).toBeUndefined()
    expect((await buffer(opened!.stream())).equals(content)).toBe(true)

    const [object] = await objectsOf(key)
    expect(await sweepFeedObjects(database.db)).toBe(0)
    await database.db
      .updateTable('feed_object')
      .set({ removed_at: sql`now() - interval '61 minutes'` })
      .where('key', '=', key)
      .execute()
    expect(await sweepFeedObjects(database.db)).toBe(1)
    expect(await objectsOf(key)).toEqual([])
    expect(await database.db.selectFrom('feed_chunk').select('seq').where('object_id', '=', object!.id).execute()).toEqual([])
  })

  it('leaves nothing of an abandoned file, and sweeps what a writer that died left', async () => {
    const abandoned = '13/run-1/feed.csv'
    const writer = await storage.create(abandoned)
    await writer.write(content)
    await writer.abandon()
    expect(await objectsOf(abandoned)).toEqual([])

    const orphan = '13/run-2/feed.csv'
    const dying = await storage.create(orphan)
    await dying.write(content)
    await dying.close()
    expect(await sweepFeedObjects(database.db)).toBe(0)
    await database.db
      .updateTable('feed_object')
      .set({ created_at: sql`now() - interval '25 hours'` })
      .where('key', '=', orphan)
      .execute()
    expect(await sweepFeedObjects(database.db)).toBe(1)
    expect(await objectsOf(orphan)).toEqual([])
  })

  it('serves the newest of a file written twice, and retires the older one', async () => {
    const key = '14/run-1/feed.csv'
    await write(key, content)
    await write(key, content, 3)
    const objects = await objectsOf(key)
    expect(objects.map((object) => [object.state, object.removed_at === null])).toEqual([
      ['stored', false],
      ['stored', true],
    ])
    expect((await read(key))?.equals(content)).toBe(true)
  })

  it('removes by prefix only the keys that start with it, LIKE wildcards taken literally', async () => {
    const small = Buffer.from('id\n1\n')
    for (const key of ['15/a_b/feed.csv', '15/a_b/new.csv', '15/axb/feed.csv', '15/a%/feed.csv', '15/a_bc/feed.csv']) await write(key, small)
    await storage.removePrefix('15/a_b/')
    await storage.removePrefix('15/a%')
    const left = await database.db.selectFrom('feed_object').select('key').where('key', 'like', '15/%').where('removed_at', 'is', null).orderBy('key').execute()
    expect(left.map((row) => row.key)).toEqual(['15/a_bc/feed.csv', '15/axb/feed.csv'])
    await expect(storage.removePrefix('')).rejects.toThrow(/non-empty/)
  })

  it('stores an empty file as an empty file', async () => {
    await write('16/run-1/empty.csv', Buffer.alloc(0))
    expect((await read('16/run-1/empty.csv'))?.length).toBe(0)
    expect((await storage.open('16/run-1/empty.csv'))?.size).toBe(0)
    expect(gunzipSync((await read('16/run-1/empty.csv', 'gzip'))!).length).toBe(0)
  })
})
