// npm run bench:import — see README "Benchmarks". Uploads 1,000,000 realistic rows to a stream of a
// site through the real server, runs an import through the process endpoint and polls its status,
// then imports again after 10,000 changed rows. In the same run it measures the bare SQL baseline:
// INSERT INTO a keyed jsonb table SELECT ... of the same rows, already in the database.
import { createReadStream } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { createAccount } from '../src/accounts/accounts.js'
import { benchDatabase, machineLine, median, sampleRss, startServerProcess, writeResult } from './support.js'
import { writeNdjson } from './product-rows.js'

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000)
const CHANGED = Number(process.env.BENCH_CHANGED ?? 10_000)
// Each upload stays under the default MAX_UPLOAD_BYTES (200 MiB): about 118 MB per 200,000 rows.
const ROWS_PER_UPLOAD = 200_000

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'catalog-import-bench-'))
const database = await benchDatabase()
const server = await startServerProcess(database.url, { RUN_CONCURRENCY: '1', RUN_POLL_SECONDS: '0.5' })
const account = await createAccount(database.db, 'bench')
const bearer = { authorization: `Bearer ${account.token.token}` }
const platform = { 'x-auth-token': account.credential.xAuthToken, 'content-type': 'application/json' }

async function call(method: string, url: string, headers: Record<string, string>, body?: RequestInit['body']) {
  const response = await fetch(`${server.baseUrl}${url}`, { method, headers, body, duplex: 'half' } as RequestInit)
  const json = (await response.json()) as Record<string, unknown>
  if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(json).slice(0, 300)}`)
  return json
}

const project = (await call('POST', '/platform/v2/projects', platform, JSON.stringify({ name: 'bench' }))) as { Projects: { id: string }[] }
const site = (await call('POST', '/platform/v2/sites', platform, JSON.stringify({ title: 'bench', project_id: project.Projects[0]?.id }))) as { Sites: { id: string }[] }
const siteId = site.Sites[0]?.id ?? ''
const stream = (await call('POST', '/streams', { ...bearer, 'content-type': 'application/vnd.api+json' }, JSON.stringify({ data: { type: 'stream', attributes: { name: 'bench' } } }))) as {
  data: { id: string }
}
const streamId = stream.data.id
await call('POST', `/platform/v2/sites/${siteId}/streams`, platform, JSON.stringify({ import_type: 1, description: 'bench', stream_id: streamId, status: 'active' }))

async function uploadFile(file: string): Promise<void> {
  await call('POST', `/streams/${streamId}/products`, { ...bearer, 'content-type': 'application/x-ndjson' }, createReadStream(file) as unknown as RequestInit['body'])
}

/** POST /process and poll the status until the run ended; the time a client waits. */
async function importRun(): Promise<{ seconds: number; serverSeconds: number; peakMb: number }> {
  await sql`CHECKPOINT`.execute(database.db)
  const rss = sampleRss(server.pid)
  const started = performance.now()
  const run = (await call('POST', `/platform/v2/process/${siteId}`, platform, JSON.stringify({ action: 'import' }))) as { process_id: string }
  for (;;) {
    const status = (await call('GET', `/platform/v2/sites/${siteId}/status/${run.process_id}`, platform)) as { status: string; message: string }
    if (status.status === 'failed') throw new Error(`import failed: ${status.message}`)
    if (status.status === 'success') break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const seconds = (performance.now() - started) / 1000
  const row = await database.db
    .selectFrom('process')
    .select(sql<number>`extract(epoch from finished_at - started_at)`.as('seconds'))
    .where('pid', '=', run.process_id)
    .executeTakeFirstOrThrow()
  return { seconds, serverSeconds: Number(row.seconds), peakMb: rss.stop() }
}

/** The same rows, already in the database, into a keyed jsonb table: what the import is measured against. */
async function baseline(): Promise<number> {
  await sql`DROP TABLE IF EXISTS bench_keyed`.execute(database.db)
  await sql`CREATE TABLE bench_keyed (id text PRIMARY KEY, data jsonb NOT NULL)`.execute(database.db)
  await sql`CHECKPOINT`.execute(database.db)
  const started = performance.now()
  await sql`INSERT INTO bench_keyed SELECT product_id, data::jsonb FROM batch_row WHERE batch_id IN (SELECT id FROM batch WHERE stream_id = ${streamId} AND kind = 'upsert')`.execute(database.db)
  const seconds = (performance.now() - started) / 1000
  await sql`DROP TABLE bench_keyed`.execute(database.db)
  return seconds
}

console.log(`writing ${ROWS} rows in ${Math.ceil(ROWS / ROWS_PER_UPLOAD)} files`)
let uploadSeconds = 0
for (let from = 0; from < ROWS; from += ROWS_PER_UPLOAD) {
  const file = path.join(dir, `part-${from}.ndjson`)
  await writeNdjson(file, Math.min(ROWS_PER_UPLOAD, ROWS - from), 0, from)
  const started = performance.now()
  await uploadFile(file)
  uploadSeconds += (performance.now() - started) / 1000
  await fs.rm(file)
}
console.log(`uploaded in ${uploadSeconds.toFixed(1)} s`)

const baselines = [await baseline()]
console.log(`baseline INSERT ... SELECT: ${baselines[0]?.toFixed(2)} s`)
const first = await importRun()
console.log(`first import: ${first.seconds.toFixed(2)} s (server ${first.serverSeconds.toFixed(2)} s)`)
baselines.push(await baseline())
console.log(`baseline again: ${baselines[1]?.toFixed(2)} s`)
const baselineSeconds = median(baselines)

const changedFile = path.join(dir, 'changed.ndjson')
await writeNdjson(changedFile, CHANGED, 1, 0, Math.floor(ROWS / CHANGED))
await uploadFile(changedFile)
const second = await importRun()
console.log(`second import (${CHANGED} changed rows): ${second.seconds.toFixed(2)} s (server ${second.serverSeconds.toFixed(2)} s)`)

const stage = await database.db.selectFrom('site_stage').select(['row_count', 'columns']).where('site_id', '=', siteId).executeTakeFirstOrThrow()
const changed = await database.db
  .selectFrom('stage_product')
  .select('data')
  .where('site_id', '=', siteId)
  .where('product_id', '=', 'SKU-00000100')
  .executeTakeFirstOrThrow()
if (Number(stage.row_count) !== ROWS) throw new Error(`stage holds ${stage.row_count} rows, expected ${ROWS}`)
console.log(`stage: ${stage.row_count} rows, ${stage.columns.length} columns; SKU-00000100 price ${changed.data.price}`)

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
