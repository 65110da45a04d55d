import fs from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FeedTooLargeError } from '../../src/feeds/feed-writer.js'
import { writeFeedFile, openWriterFixture, writeAndRead, type WriterFixture } from './feed-writer-harness.js'

let f: WriterFixture

beforeAll(async () => {
  f = await openWriterFixture()
  // ~25 MB of NDJSON, far over the budgets below.
  await f.client.query(
    `CREATE TABLE big_rows AS SELECT lpad(i::text, 6, '0') AS product_id, jsonb_build_object('a', repeat('y', 500)) AS data FROM generate_series(1, 50000) i`,
  )
})

afterAll(async () => {
  await f.close()
})

const SELECT = 'SELECT product_id, data FROM big_rows WHERE product_id <= $limit'
const meta = { title: '', link: '' }

describe('a byte budget per file', () => {
  it('writes a file of exactly the budget, and refuses one byte less', async () => {
    const select = SELECT.replace('$limit', `'000003'`)
    const { written } = await writeAndRead(f, select, ['a'], 'ndjson')
    const dir = await fs.mkdtemp(path.join(f.dir, 'exact-'))
    const exact = await writeFeedFile(f.client, { selectSql: select, columns: ['a'] }, 'ndjson', path.join(dir, 'feed.ndjson'), meta, {
      maxBytes: written.bytes,
    })
    expect(exact.bytes).toBe(written.bytes)
    await fs.rm(exact.tmpPath)
    const over = writeFeedFile(f.client, { selectSql: select, columns: ['a'] }, 'ndjson', path.join(dir, 'feed.ndjson'), meta, { maxBytes: written.bytes - 1 })
    await expect(over).rejects.toThrow(FeedTooLargeError)
    expect(await fs.readdir(dir)).toEqual([])
  })

  it('stops a large export at the budget: cancels the COPY, removes the partial file, leaves the connection usable', async () => {
    const dir = await fs.mkdtemp(path.join(f.dir, 'budget-'))
    const { rows } = await f.client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    const cancelled: number[] = []
    const cancel = async (backendPid: number) => {
      cancelled.push(backendPid)
      await f.pool.query('SELECT pg_cancel_backend($1)', [backendPid])
    }
    await f.client.query('BEGIN')
    try {
      const writing = writeFeedFile(
        f.client,
        { selectSql: 'SELECT product_id, data FROM big_rows', columns: ['a'] },
        'ndjson',
        path.join(dir, 'feed.ndjson'),
        meta,
        { maxBytes: 1024 * 1024, cancel },
      )
      const error = await writing.then(
        () => undefined,
        (failure: unknown) => failure,
      )
      expect(error).toBeInstanceOf(FeedTooLargeError)
      expect((error as FeedTooLargeError).maxBytes).toBe(1024 * 1024)
    } finally {
      await f.client.query('ROLLBACK')
    }
    expect(cancelled).toEqual([rows[0]?.pid])
    expect(await fs.readdir(dir)).toEqual([])
    expect((await f.client.query('SELECT count(*)::int AS n FROM big_rows')).rows).toEqual([{ n: 50000 }])
  })
})
