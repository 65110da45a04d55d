import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { buffer, text } from 'node:stream/consumers'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exportKeyPrefix, storageKeyOf } from '../../src/feeds/feed-storage.js'
import { LocalFeedStorage } from '../../src/feeds/local-feed-storage.js'

let dir: string
let storage: LocalFeedStorage

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'local-feed-storage-'))
  storage = new LocalFeedStorage(dir)
})

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true })
})

async function write(key: string, chunks: string[]): Promise<void> {
  const writer = await storage.create(key)
  for (const chunk of chunks) await writer.write(Buffer.from(chunk))
  await writer.close()
  await writer.publish()
}

async function read(key: string): Promise<string | undefined> {
  const stored = await storage.open(key)
  return stored && text(stored.stream())
}

describe('LocalFeedStorage', () => {
  it('keeps a file at DATA_DIR/feeds/<channel>/<pid>/<filename>, visible only once published', async () => {
    const key = storageKeyOf('7', 'run-1', 'feed.csv')
    const writer = await storage.create(key)
    await writer.write(Buffer.from('id,title\n'))
    await writer.write(Buffer.from('1,a\n'))
    await writer.close()
    // Complete, but only temporary files beside the final names so far (the gzip twin in .gzip/).
    expect(await storage.open(key)).toBeUndefined()
    expect(await storage.open(key, 'gzip')).toBeUndefined()
    const tmp = expect.stringMatching(/^\.tmp-[0-9a-f]{16}-feed\.csv$/)
    expect((await fs.readdir(path.join(dir, '7', 'run-1'))).sort()).toEqual(['.gzip', tmp])
    expect(await fs.readdir(path.join(dir, '7', 'run-1', '.gzip'))).toEqual([tmp])
    await writer.publish()
    expect((await fs.readdir(path.join(dir, '7', 'run-1'))).sort()).toEqual(['.gzip', 'feed.csv'])
    expect(await fs.readdir(path.join(dir, '7', 'run-1', '.gzip'))).toEqual(['feed.csv'])
    const stored = await storage.open(key)
    expect(stored?.size).toBe(13)
    await stored?.close()
    expect(await read(key)).toBe('id,title\n1,a\n')
    // The gzip representation holds the same bytes, compressed once when they were written.
    const gzip = await storage.open(key, 'gzip')
    expect(gunzipSync(await buffer(gzip!.stream())).toString()).toBe('id,title\n1,a\n')
    // A byte range of either representation.
    expect(await text((await storage.open(key))!.stream({ start: 3, end: 7 }))).toBe('title')
  })

  it('replaces a published file whole (a rename), and closes an opened file without reading it', async () => {
    const key = storageKeyOf('7', 'run-2', 'feed.csv')
    await write(key, ['old'])
    const before = await storage.open(key)
    await write(key, ['new ', 'content'])
    expect(await read(key)).toBe('new content')
    await before?.close()
  })

  it('leaves nothing of an abandoned file, before or after it was published', async () => {
    const unfinished = await storage.create(storageKeyOf('8', 'run-1', 'a.csv'))
    await unfinished.write(Buffer.from('half'))
    await unfinished.abandon()
    // The export's directory goes with its last file.
    await expect(fs.stat(path.join(dir, '8'))).resolves.toBeTruthy()
    await expect(fs.stat(path.join(dir, '8', 'run-1'))).rejects.toThrow(/ENOENT/)
    const published = await storage.create(storageKeyOf('8', 'run-2', 'b.csv'))
    await published.write(Buffer.from('whole'))
    await published.close()
    await published.publish()
    await published.abandon()
    expect(await storage.open(storageKeyOf('8', 'run-2', 'b.csv'))).toBeUndefined()
    await expect(fs.stat(path.join(dir, '8', 'run-2'))).rejects.toThrow(/ENOENT/)
  })

  it('never writes into a file it did not create, and never outside its directory', async () => {
    await expect(storage.create('../escape.csv')).rejects.toThrow(/not a feed storage key/)
    expect(await storage.open('../escape.csv')).toBeUndefined()
    expect(await storage.open(storageKeyOf('9', 'run-1', 'missing.csv'))).toBeUndefined()
  })

  it('removes keys (a missing one is fine) and the export directories they leave empty', async () => {
    const [a, b, c] = ['a.csv', 'b.csv', 'c.csv'].map((name) => storageKeyOf('10', 'run-1', name)) as [string, string, string]
    const other = storageKeyOf('10', 'run-2', 'a.csv')
    for (const key of [a, b, c, other]) await write(key, [key])
    await storage.remove([a, b, storageKeyOf('10', 'run-1', 'never.csv')])
    expect(await read(c)).toBe(c)
    await storage.remove([c])
    await expect(fs.stat(path.join(dir, '10', 'run-1'))).rejects.toThrow(/ENOENT/)
    expect(await read(other)).toBe(other)
  })

  it('removes everything under a prefix (an interrupted export), and only that', async () => {
    const leftovers = [storageKeyOf('11', 'run-1', 'a.csv'), storageKeyOf('11', 'run-1', 'b.csv')]
    for (const key of leftovers) await write(key, ['x'])
    const unfinished = await storage.create(storageKeyOf('11', 'run-1', 'c.csv'))
    await unfinished.write(Buffer.from('half'))
    await unfinished.close()
    const kept = [storageKeyOf('11', 'run-10', 'a.csv'), storageKeyOf('12', 'run-1', 'a.csv')]
    for (const key of kept) await write(key, ['kept'])
    await storage.removePrefix(exportKeyPrefix('11', 'run-1'))
    await expect(fs.stat(path.join(dir, '11', 'run-1'))).rejects.toThrow(/ENOENT/)
    for (const key of kept) expect(await read(key)).toBe('kept')
    // A prefix nothing has is fine; the empty prefix (everything) is refused.
    await storage.removePrefix(exportKeyPrefix('13', 'run-1'))
    await expect(storage.removePrefix('')).rejects.toThrow()
  })

  it('writes a file while another writer of the same export abandons its last one (the directory is made again)', async () => {
    // One writer gives up (a process dying mid-file) while another starts a file of the same export:
    // the first one's abandon removes the directories it leaves empty, which may be between the second's
    // mkdir and its open. Many pairs at once, as they interleave differently each time.
    const pair = async (name: string, delay: number) => {
      const dying = await storage.create(storageKeyOf('9', name, 'old.csv'))
      const later = async () => {
        for (let step = 0; step < delay; step++) await fs.stat(dir)
        return storage.create(storageKeyOf('9', name, 'feed.csv'))
      }
      const [, writer] = await Promise.all([dying.abandon(), later()])
      await writer.write(Buffer.from(name))
      await writer.close()
      await writer.publish()
      return read(storageKeyOf('9', name, 'feed.csv'))
    }
    for (let round = 0; round < 10; round++) {
      const names = Array.from({ length: 30 }, (_, i) => `race-${round}-${i}`)
      expect(await Promise.all(names.map((name, i) => pair(name, i % 6)))).toEqual(names)
    }
  })
})
