// The bytes a site's data takes on disk, per table: heap, TOAST (with its index) and indexes, read
// from the relation files after the hourly cleanup has released what it releases and a VACUUM (what
// autovacuum does next) has truncated what it can. The bench has one site, so the tables are its data.
import { sql } from 'kysely'
import { runCleanup } from '../src/jobs/cleanup.js'
import type { Db } from '../src/db/database.js'

const SITE_TABLES = ['stream_product', 'stage_product', 'batch_row', 'batch_payload', 'stage_change', 'feed_object', 'feed_chunk'] as const

export interface TableSize {
  table: string
  heap: number
  toast: number
  indexes: number
  total: number
}

/** Releases applied uploads as the hourly cleanup does (grace 0: the bench's clock has no hour to wait), then VACUUMs. */
export async function cleanupAsHourly(db: Db): Promise<void> {
  await runCleanup(db, { now: new Date(), graceMinutes: 0 })
  // DISABLE_PAGE_SKIPPING: pages autovacuum already emptied (and marked all-visible) are looked at again, so that
  // the empty end of a table is given back to the file system as a VACUUM can. A VACUUM stops giving it back
  // when another session waits for the table (autovacuum, at 1,000,000 rows): again until it stops shrinking.
  // Autovacuum is held off each table meanwhile, since it is that other session.
  for (const table of SITE_TABLES) {
    await sql`ALTER TABLE ${sql.table(table)} SET (autovacuum_enabled = false)`.execute(db)
    for (let round = 0, size = Infinity; round < 5; round++) {
      await sql`VACUUM (ANALYZE, DISABLE_PAGE_SKIPPING) ${sql.table(table)}`.execute(db)
      const { rows } = await sql<{ bytes: string }>`SELECT pg_relation_size(${table}::regclass) AS bytes`.execute(db)
      const now = Number(rows[0]?.bytes ?? 0)
      if (now >= size) break
      size = now
    }
    await sql`ALTER TABLE ${sql.table(table)} RESET (autovacuum_enabled)`.execute(db)
  }
}

export async function siteTableSizes(db: Db): Promise<TableSize[]> {
  const sizes: TableSize[] = []
  for (const table of SITE_TABLES) {
    const { rows } = await sql<{ heap: string; toast: string; indexes: string }>`
      SELECT pg_relation_size(c.oid) AS heap,
             coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) AS toast,
             pg_indexes_size(c.oid) AS indexes
      FROM pg_class c WHERE c.oid = ${table}::regclass`.execute(db)
    const row = rows[0]
    if (!row) continue
    const [heap, toast, indexes] = [Number(row.heap), Number(row.toast), Number(row.indexes)]
    sizes.push({ table, heap, toast, indexes, total: heap + toast + indexes })
  }
  return sizes
}

/** The size table as markdown lines, with each table's share of the upload's NDJSON bytes, and its total before the cleanup. */
export function sizeLines(sizes: TableSize[], ndjsonBytes: number, beforeCleanup: TableSize[]): string[] {
  const mb = (n: number) => (n / 1e6).toFixed(0)
  const sum = (list: TableSize[]) => list.reduce((total, s) => total + s.total, 0)
  const before = (table: string) => beforeCleanup.find((s) => s.table === table)?.total ?? 0
  const total = sum(sizes)
  return [
    '| table | total MB before the cleanup | heap MB | TOAST MB | indexes MB | total MB | × NDJSON |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...sizes.map(
      (s) =>
        `| ${s.table} | ${mb(before(s.table))} | ${mb(s.heap)} | ${mb(s.toast)} | ${mb(s.indexes)} | ${mb(s.total)} | ${(s.total / ndjsonBytes).toFixed(2)} |`,
    ),
    `| **all** | ${mb(sum(beforeCleanup))} | | | | **${mb(total)}** | **${(total / ndjsonBytes).toFixed(2)}** |`,
  ]
}

/** stage_product split by stage (its column bytes, before page overhead): which copy weighs what. */
export async function stageShareLines(db: Db): Promise<string[]> {
  const { rows } = await sql<{ stage: string; rows: string; data: string; line: string }>`
    SELECT stage, count(*) AS rows, coalesce(sum(pg_column_size(data)), 0) AS data, coalesce(sum(pg_column_size(line)), 0) AS line
    FROM stage_product GROUP BY stage ORDER BY stage DESC`.execute(db)
  const mb = (n: string) => (Number(n) / 1e6).toFixed(0)
  return [
    '| stage_product rows of | rows | data MB | line MB |',
    '|---|---:|---:|---:|',
    ...rows.map((r) => `| ${r.stage} stage | ${Number(r.rows).toLocaleString('en')} | ${mb(r.data)} | ${mb(r.line)} |`),
  ]
}
