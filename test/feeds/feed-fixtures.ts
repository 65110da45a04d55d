import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import type { FeedFormat } from '../../src/db/schema.js'
import { commitFeedFile, writeFeedFile, type WrittenFeed } from '../../src/feeds/feed-writer.js'
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js'

export interface WriterFixture {
  database: TestDatabase
  pool: pg.Pool
  client: pg.PoolClient
  dir: string
  close(): Promise<void>
}

/** A test database, one checked-out client (temp tables live on it) and a temp directory. */
export async function openWriterFixture(): Promise<WriterFixture> {
  const database = await createTestDatabase()
  const pool = new pg.Pool({ connectionString: database.url, max: 2 })
  const client = await pool.connect()
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'feeds-test-'))
  return {
    database,
    pool,
    client,
    dir,
    close: async () => {
      client.release()
      await pool.end()
      await database.drop()
      await fs.rm(dir, { recursive: true, force: true })
    },
  }
}

/** Fills a temp table `(product_id text, data jsonb)` with the given rows. */
export async function createRowsTable(client: pg.PoolClient, table: string, rows: Record<string, Record<string, string>>): Promise<string> {
  await client.query(`CREATE TEMP TABLE ${table} (product_id text, data jsonb)`)
  for (const [id, data] of Object.entries(rows)) await client.query(`INSERT INTO ${table} VALUES ($1, $2)`, [id, JSON.stringify(data)])
  return `SELECT product_id, data FROM ${table}`
}

let counter = 0

/** Writes a feed, renames it into place, and returns the file's text with what the writer reported. */
export async function writeAndRead(
  f: WriterFixture,
  selectSql: string,
  columns: string[],
  format: FeedFormat,
  meta = { title: 'Feed', link: 'https://shop.example/' },
): Promise<{ text: string; bytes: Buffer; written: WrittenFeed; finalPath: string }> {
  const finalPath = path.join(f.dir, `feed-${++counter}.${format}`)
  const written = await writeFeedFile(f.client, { selectSql, columns }, format, finalPath, meta)
  await commitFeedFile(written, finalPath)
  const bytes = await fs.readFile(finalPath)
  return { text: bytes.toString('utf8'), bytes, written, finalPath }
}
