import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import type { FeedFormat } from '../../src/db/schema.js'
import type { FeedMeta, FeedRows } from '../../src/feeds/feed-sql.js'
import { writeFeed, type FeedBudget, type FeedContent } from '../../src/feeds/feed-writer.js'
import { LocalFeedFile } from '../../src/feeds/local-feed-storage.js'
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

/** A feed written to a file path of the test's choosing, outside any FeedStorage. */
export interface WrittenFeed extends FeedContent {
  tmpPath: string
}

/** writeFeed into `.tmp-<random>-<name>` beside `finalPath` (LocalFeedFile), left there for the test to inspect. */
export async function writeFeedFile(client: pg.PoolClient, rows: FeedRows, format: FeedFormat, finalPath: string, meta: FeedMeta, budget?: FeedBudget) {
  const file = await LocalFeedFile.open(finalPath)
  const written: WrittenFeed = { ...(await writeFeed(client, rows, format, meta, file, budget)), tmpPath: file.tmpPath }
  return written
}

/** Moves the file to its final name, as LocalFeedFile's publish does. */
export async function commitFeedFile(written: WrittenFeed, finalPath: string): Promise<void> {
  await fs.rename(written.tmpPath, finalPath)
}

export async function discardFeedFile(written: WrittenFeed): Promise<void> {
  await fs.rm(written.tmpPath, { force: true })
}
