import type * as nodeFs from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { writeFeedFile, openWriterFixture, type WriterFixture } from './feed-writer-harness.js'

// A disk that fills up in the middle of a feed: the next file stream fails with ENOSPC after 1 MB.
const disk = vi.hoisted(() => ({ failAfter: Infinity }))

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof nodeFs>()
  const createWriteStream = ((...args: Parameters<typeof actual.createWriteStream>) => {
    const stream = actual.createWriteStream(...args)
    let written = 0
    const write = stream._write.bind(stream)
    stream._writev = undefined
    stream._write = (chunk: Buffer, encoding, callback) => {
      written += chunk.length
      if (written > disk.failAfter) return callback(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }))
      write(chunk, encoding, callback)
    }
    return stream
  }) as typeof actual.createWriteStream
  return { ...actual, default: { ...actual, createWriteStream }, createWriteStream }
})

let f: WriterFixture

beforeAll(async () => {
  f = await openWriterFixture()
  await f.client.query(
    `CREATE TABLE many_rows AS SELECT lpad(i::text, 6, '0') AS product_id, jsonb_build_object('a', repeat('y', 500)) AS data FROM generate_series(1, 50000) i`,
  )
})

afterAll(async () => {
  await f.close()
})

describe('a write failing halfway', () => {
  it('fails the export, removes the partial file, and leaves the connection usable', async () => {
    const dir = await fs.mkdtemp(path.join(f.dir, 'enospc-'))
    disk.failAfter = 1024 * 1024
    await f.client.query('BEGIN')
    try {
      const writing = writeFeedFile(
        f.client,
        { selectSql: 'SELECT product_id, data FROM many_rows', columns: ['a'] },
        'ndjson',
        path.join(dir, 'feed.ndjson'),
        { title: '', link: '' },
      )
      await expect(writing).rejects.toThrow(/ENOSPC/)
    } finally {
      disk.failAfter = Infinity
      await f.client.query('ROLLBACK')
    }
    // The rest of the COPY output was read and dropped: the connection answers the next query.
    expect((await f.client.query('SELECT count(*)::int AS n FROM many_rows')).rows).toEqual([{ n: 50000 }])
    expect(await fs.readdir(dir)).toEqual([])
  })
})
