// npm run bench:import — see README "Benchmarks". Uploads 1,000,000 realistic rows to a stream of a
// site through the real server, runs an import through the process endpoint and polls its status,
// then imports again after 10,000 changed rows. In the same run it measures the bare SQL baseline:
// INSERT INTO a keyed jsonb table SELECT ... of the same rows, already in the database.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { benchDatabase, createBenchSite, machineLine, median, ROWS_PER_UPLOAD, startServerProcess, writeResult } from './support.js'
import { writeNdjson } from './product-rows.js'

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000)
const CHANGED = Number(process.env.BENCH_CHANGED ?? 10_000)

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'catalog-import-bench-'))
const database = await benchDatabase()
const server = await startServerProcess(database.url, { RUN_CONCURRENCY: '1', RUN_POLL_SECONDS: '0.5' })
const site = await createBenchSite(database, server, dir)
const { streamId } = site

/** The same rows, already in the database, into a keyed jsonb table: what the import is measured against. */
async function baseline(): Promise<number> {
  await sql`DROP TABLE IF EXISTS bench_keyed`.execute(database.db)
  await sql`CREATE TABLE bench_keyed (id text PRIMARY KEY, data jsonb NOT NULL)`.execute(database.db)
  await sql`CHECKPOINT`.execute(database.db)
  const started = performance.now()
  await sql`INSERT INTO bench_keyed SELECT product_id, data::jsonb FROM batch_row WHERE batch_id IN (SELECT id FROM batch WHERE stream_id = ${streamId} AND kind = 'upsert')`.execute(
    database.db,
  )
  const seconds = (performance.now() - started) / 1000
  await sql`DROP TABLE bench_keyed`.execute(database.db)
  return seconds
}

const uploadSeconds = await site.uploadRows(ROWS)

const baselines = [await baseline()]
console.log(`baseline INSERT ... SELECT: ${baselines[0]?.toFixed(2)} s`)
const first = await site.importRun()
console.log(`first import: ${first.seconds.toFixed(2)} s (server ${first.serverSeconds.toFixed(2)} s)`)
// Three baselines in all (one before the import, two after) so that the median is a real one.
for (let i = 0; i < 2; i++) {
  baselines.push(await baseline())
  console.log(`baseline again: ${baselines.at(-1)?.toFixed(2)} s`)
}
const baselineSeconds = median(baselines)

const changedFile = path.join(dir, 'changed.ndjson')
await writeNdjson(changedFile, CHANGED, 1, 0, Math.floor(ROWS / CHANGED))
await site.uploadFile(changedFile)
const second = await site.importRun()
console.log(`second import (${CHANGED} changed rows): ${second.seconds.toFixed(2)} s (server ${second.serverSeconds.toFixed(2)} s)`)

const stage = await database.db.selectFrom('site_stage').select(['row_count', 'columns']).where('site_id', '=', site.siteId).executeTakeFirstOrThrow()
const changed = await database.db
  .selectFrom('stage_product')
  .select('data')
  .where('site_id', '=', site.siteId)
  .where('product_id', '=', 'SKU-00000100')
  .executeTakeFirstOrThrow()
if (Number(stage.row_count) !== ROWS) throw new Error(`stage holds ${stage.row_count} rows, expected ${ROWS}`)
console.log(`stage: ${stage.row_count} rows, ${stage.columns.length} columns; SKU-00000100 price ${changed.data?.price}`)

await server.stop()
await database.close()
await fs.rm(dir, { recursive: true, force: true })

const ratio = first.seconds / baselineSeconds
const secondShare = second.seconds / first.seconds
const lines = [
  '# Import benchmark',
  '',
  `Run with \`npm run bench:import\` on ${new Date().toISOString().slice(0, 10)}: ${machineLine()}.`,
  `Embedded Postgres (durable settings), the compiled server as a child process, ${ROWS.toLocaleString('en')} rows of 15 attributes uploaded in ${Math.ceil(ROWS / ROWS_PER_UPLOAD)} NDJSON requests (${uploadSeconds.toFixed(1)} s).`,
  'Import times are what a client waits: from `POST /process` until the polled status says `success` (50 ms polling).',
  '',
  '| step | seconds | rows/s | ratio |',
  '|---|---:|---:|---:|',
  `| baseline: \`INSERT INTO keyed jsonb table SELECT\` of the same rows (median of ${baselines.length}: ${baselines.map((s) => s.toFixed(2)).join(', ')}) | ${baselineSeconds.toFixed(2)} | ${Math.round(ROWS / baselineSeconds).toLocaleString('en')} | 1.00 |`,
  `| first import (${ROWS.toLocaleString('en')} rows; run itself ${first.serverSeconds.toFixed(2)} s) | ${first.seconds.toFixed(2)} | ${Math.round(ROWS / first.seconds).toLocaleString('en')} | **${ratio.toFixed(2)}** of baseline (target ≤ 2) |`,
  `| second import (${CHANGED.toLocaleString('en')} changed rows; run itself ${second.serverSeconds.toFixed(2)} s) | ${second.seconds.toFixed(2)} | ${Math.round(CHANGED / second.seconds).toLocaleString('en')} | **${(secondShare * 100).toFixed(1)} %** of the first (target < 10 %) |`,
  '',
  `Peak server RSS during the imports: ${Math.round(Math.max(first.peakMb, second.peakMb))} MB.`,
  '',
]
await writeResult('import.md', lines.join('\n'))
console.log(lines.join('\n'))
