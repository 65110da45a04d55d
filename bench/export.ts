// npm run bench:export — see README "Benchmarks". A site with 1,000,000 imported rows exported to
// CSV through a channel (POST /process, action channel, status polled), then again after 10,000 rows
// changed. In the same run: a bare `COPY (SELECT ...) TO STDOUT WITH CSV` of the same rows into a
// file, the physical limit the export is measured against. Peak server memory is sampled at two
// sizes, to show it stays flat with the size of the feed.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { PRODUCT_COLUMNS, writeNdjson } from './product-rows.js'
import { bareCopyToCsv, benchDatabase, createBenchSite, machineLine, median, startServerProcess, writeResult } from './support.js'

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000)
const CHANGED = Number(process.env.BENCH_CHANGED ?? 10_000)

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'catalog-export-bench-'))
const database = await benchDatabase()
const server = await startServerProcess(database.url, { RUN_CONCURRENCY: '1', RUN_POLL_SECONDS: '0.5' })
const site = await createBenchSite(database, server, dir)

const bareCopy = () => bareCopyToCsv(database.url, site.siteId, path.join(dir, 'bare.csv'))

async function createChannel(): Promise<string> {
  const created = (await site.call(
    'POST',
    `/platform/v2/sites/${site.siteId}/channels`,
    site.platform,
    JSON.stringify({
      name: 'bench',
      export_name: 'bench',
      format: 'csv',
      mapping: PRODUCT_COLUMNS.map((c) => ({ column: c, source: c })),
      filenames: [{ type: null, filename: 'feed.csv' }],
    }),
  )) as { Channels: { id: string }[] }
  return created.Channels[0]?.id ?? ''
}

async function feedBytes(channelId: string): Promise<number> {
  const file = await database.db.selectFrom('feed_file').select('bytes').where('channel_id', '=', channelId).executeTakeFirstOrThrow()
  return Number(file.bytes)
}

// A smaller site first, for the memory comparison.
const SMALL = Math.min(200_000, ROWS)
await site.uploadRows(SMALL)
await site.importRun()
const channelId = await createChannel()
const small = await site.runAction('channel', channelId)
console.log(`export of ${SMALL} rows: ${small.seconds.toFixed(2)} s, peak RSS ${Math.round(small.peakMb)} MB`)

// The full site: the remaining rows, imported; the channel's previous export is the small one, so
// the first full export is measured against a second, empty-history channel.
await fs.mkdir(dir, { recursive: true })
let uploaded = 0
for (let from = SMALL; from < ROWS; from += 200_000) {
  const file = path.join(dir, `rest-${from}.ndjson`)
  await writeNdjson(file, Math.min(200_000, ROWS - from), 0, from)
  const started = performance.now()
  await site.uploadFile(file)
  uploaded += (performance.now() - started) / 1000
  await fs.rm(file)
}
console.log(`uploaded the rest in ${uploaded.toFixed(1)} s`)
await site.importRun()
const fullChannel = await createChannel()
const baselines = [await bareCopy()]
const first = await site.runAction('channel', fullChannel)
baselines.push(await bareCopy(), await bareCopy())
const baselineSeconds = median(baselines)
console.log(`bare COPY: ${baselines.map((s) => s.toFixed(2)).join(', ')} s; first export ${first.seconds.toFixed(2)} s`)

const changedFile = path.join(dir, 'changed.ndjson')
await writeNdjson(changedFile, CHANGED, 1, 0, Math.floor(ROWS / CHANGED))
await site.uploadFile(changedFile)
await site.importRun()
const second = await site.runAction('channel', fullChannel)
console.log(`second export (${CHANGED} changed rows): ${second.seconds.toFixed(2)} s`)

const history = (await site.call('GET', `/platform/v2/sites/${site.siteId}/channels/${fullChannel}/history`, site.platform)) as {
  Channels: { history: Record<string, string>[] }[]
}
const latest = history.Channels[0]?.history[0] ?? {}
const bytes = await feedBytes(fullChannel)
await server.stop()
await database.close()
await fs.rm(dir, { recursive: true, force: true })

const lines = [
  '# Export benchmark',
  '',
  `Run with \`npm run bench:export\` on ${new Date().toISOString().slice(0, 10)}: ${machineLine()}.`,
  `Embedded Postgres (durable settings), the compiled server as a child process. A CSV channel of ${PRODUCT_COLUMNS.length} columns over a site of ${ROWS.toLocaleString('en')} imported rows; the feed file is ${(bytes / 1e6).toFixed(0)} MB.`,
  'Export times are what a client waits: from `POST /process` (action `channel`) until the polled status says `success`. They include building the channel stage (the rows the export read, kept for the delta and for `stage/channel` reads) and the delta against the previous export.',
  '',
  '| step | seconds | rows/s | ratio |',
  '|---|---:|---:|---:|',
  `| baseline: bare \`COPY (SELECT …) TO STDOUT WITH CSV\` of the same rows into a file (median of ${baselines.length}: ${baselines.map((s) => s.toFixed(2)).join(', ')}) | ${baselineSeconds.toFixed(2)} | ${Math.round(ROWS / baselineSeconds).toLocaleString('en')} | 1.00 |`,
  `| first export (${ROWS.toLocaleString('en')} rows, all new; run itself ${first.serverSeconds.toFixed(2)} s) | ${first.seconds.toFixed(2)} | ${Math.round(ROWS / first.seconds).toLocaleString('en')} | **${(first.seconds / baselineSeconds).toFixed(2)}** of baseline (target ≤ 2) |`,
  `| second export (${CHANGED.toLocaleString('en')} rows changed; history: ${latest.product_count_modified ?? '?'} modified, ${latest.product_count_unchanged ?? '?'} unchanged; run itself ${second.serverSeconds.toFixed(2)} s) | ${second.seconds.toFixed(2)} | ${Math.round(ROWS / second.seconds).toLocaleString('en')} | ${(second.seconds / baselineSeconds).toFixed(2)} of baseline |`,
  '',
  `Peak server RSS: ${Math.round(small.peakMb)} MB exporting ${SMALL.toLocaleString('en')} rows, ${Math.round(first.peakMb)} MB exporting ${ROWS.toLocaleString('en')} rows (flat with size: the file is streamed from Postgres to disk).`,
  '',
]
await writeResult('export.md', lines.join('\n'))
console.log(lines.join('\n'))
