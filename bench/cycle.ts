// npm run bench:cycle [-- --rows 5000000] [--core] — see README "Benchmarks" (--core: without the Google and rules sections). The full cycle of a catalog
// (upload in parts of 200,000 rows, about 118 MB each; import; first export of a CSV channel of
// every column), then the small-update cycle (1% of the rows, spread at random over the whole id
// range, changed, uploaded, then `action: all` until success), the feed downloads after it, and an
// incremental import of another 1%. In the same run the baselines: a bare COPY of the same file into
// a text column, a bare INSERT … SELECT into a keyed jsonb table, a bare COPY (SELECT the columns) TO
// a CSV file. Peak server RSS over the whole run.
import fs from 'node:fs/promises'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { cleanupAsHourly, siteTableSizes, sizeLines, stageShareLines } from './disk-sizes.js'
import { productRow, writeNdjson } from './product-rows.js'
import { rulesCycle } from './cycle-rules.js'
import { googleCycle } from './cycle-google.js'
import {
  bareCopyToCsv,
  benchDatabase,
  createBenchSite,
  machineLine,
  ROWS_PER_UPLOAD,
  sampleRss,
  startServerProcess,
  writeResult,
  type ImportTiming,
} from './support.js'

const rowsArg = process.argv.indexOf('--rows')
const ROWS = Number(rowsArg > 0 ? process.argv[rowsArg + 1] : (process.env.BENCH_ROWS ?? 1_000_000))
const CHANGED = Math.max(1, Math.round(ROWS / 100))
const CORE = process.argv.includes('--core')

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'catalog-cycle-bench-'))
const database = await benchDatabase()
// Files past the default FEED_MAX_BYTES (2 GiB) at 5,000,000 rows: the Google channel's TSV with its ' EUR' is 2.2 GB.
const server = await startServerProcess(database.url, { RUN_CONCURRENCY: '1', RUN_POLL_SECONDS: '0.5', FEED_MAX_BYTES: String(8 * 2 ** 30) })
const rss = sampleRss(server.pid)
const site = await createBenchSite(database, server, dir)
const seconds = (started: number) => (performance.now() - started) / 1000
const f = (n: number, digits = 2) => n.toFixed(digits)

async function withClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** Baselines 1 and 2: the upload's bytes into a text column, then those rows into a keyed jsonb table. */
async function bareLoad(files: string[]): Promise<{ copy: number; insert: number }> {
  return withClient(async (client) => {
    await client.query('DROP TABLE IF EXISTS bench_lines, bench_keyed')
    await client.query('CREATE TABLE bench_lines (line text)')
    await client.query('CREATE TABLE bench_keyed (id text PRIMARY KEY, data jsonb NOT NULL)')
    let started = performance.now()
    for (const file of files) await pipeline((await fs.open(file)).createReadStream(), client.query(copyFrom('COPY bench_lines (line) FROM STDIN')))
    const copy = seconds(started)
    started = performance.now()
    await client.query("INSERT INTO bench_keyed SELECT line::jsonb ->> 'id', line::jsonb FROM bench_lines")
    const insert = seconds(started)
    await client.query('DROP TABLE bench_lines, bench_keyed')
    return { copy, insert }
  })
}

/** A deterministic random 1% of the id range (xorshift), as NDJSON rows of a new version. */
async function writeChange(file: string, version: number, seed: number): Promise<void> {
  const picked = new Set<number>()
  let x = seed
  while (picked.size < CHANGED) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    picked.add((x >>> 0) % ROWS)
  }
  await fs.writeFile(file, [...picked].map((i) => `${productRow(i, version)}\n`).join(''))
}

/** The cycle channel's full CSV file, by its URL on this server. */
async function identityFeedUrl(): Promise<string> {
  const read = (await site.call('GET', `/platform/v2/sites/${site.siteId}/channels/${channelId}`, site.platform)) as {
    Channels: { feed_destinations: Record<string, { destination_id: number; urls?: string[] }> }[]
  }
  const feed = Object.values(read.Channels[0]?.feed_destinations ?? {}).find((d) => d.destination_id === 1)
  return (feed?.urls?.[0] ?? '').replace(/^https?:\/\/[^/]+/, server.baseUrl)
}

/** Seconds until the channel's full file is written to the storage (right after the export that recorded it, or its first download). */
async function fileStored(id: string): Promise<number> {
  const started = performance.now()
  for (;;) {
    const pending = await database.db.selectFrom('feed_file').select('id').where('channel_id', '=', id).where('pending', '=', true).executeTakeFirst()
    if (!pending) return seconds(started)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * A channel's export counted until its full file is stored: written by the export itself, or right
 * after it by the server. No measured export then pays for the writing of the one before it.
 */
async function exportUntilStored(id: string): Promise<ImportTiming> {
  const run = await site.runAction('channel', id)
  return { ...run, seconds: run.seconds + (await fileStored(id)) }
}

/** A download as a client sees it: the bytes on the wire (node:http does not decompress, fetch would). */
async function download(url: string, gzip: boolean): Promise<{ seconds: number; bytes: number }> {
  const started = performance.now()
  const response = await new Promise<http.IncomingMessage>((resolve, reject) =>
    http.get(url, { headers: { 'accept-encoding': gzip ? 'gzip' : 'identity' } }, resolve).on('error', reject),
  )
  if (response.statusCode !== 200) throw new Error(`download ${url}: ${response.statusCode}`)
  if (gzip !== (response.headers['content-encoding'] === 'gzip')) throw new Error(`download ${url}: content-encoding ${response.headers['content-encoding']}`)
  let bytes = 0
  for await (const chunk of response as AsyncIterable<Buffer>) bytes += chunk.length
  return { seconds: seconds(started), bytes }
}

// The full cycle, through the API.
const files: string[] = []
for (let from = 0; from < ROWS; from += ROWS_PER_UPLOAD) {
  const file = path.join(dir, `part-${from}.ndjson`)
  await writeNdjson(file, Math.min(ROWS_PER_UPLOAD, ROWS - from), 0, from)
  files.push(file)
}
let started = performance.now()
for (const file of files) await site.uploadFile(file)
const upload = seconds(started)
const fullImport = await site.importRun()
const channel = (await site.call(
  'POST',
  `/platform/v2/sites/${site.siteId}/channels`,
  site.platform,
  // No mapping: every column of the import stage, as it is (an explicit mapping builds each row's object).
  JSON.stringify({ name: 'cycle', export_name: 'cycle', format: 'csv' }),
)) as { Channels: { id: string }[] }
const channelId = channel.Channels[0]?.id ?? ''
const firstExport = await site.runAction('channel', channelId)
const full = upload + fullImport.seconds + firstExport.seconds
// What the first download after the full export still has to write, beyond a plain download.
// The first download is served from the channel stage and the file written after it: counted until it is stored.
const feedUrl = await identityFeedUrl()
const fullFirstDownload = await download(feedUrl, false)
const fullStored = fullFirstDownload.seconds + (await fileStored(channelId))
const fullRepeatedDownload = await download(feedUrl, false)
const fullExport = firstExport.seconds + Math.max(0, fullStored - fullRepeatedDownload.seconds)
console.log(
  `after the full export: first download ${f(fullFirstDownload.seconds)} s, file stored after ${f(fullStored)} s, repeated ${f(fullRepeatedDownload.seconds)} s`,
)
console.log(`full cycle: upload ${upload.toFixed(1)} s, import ${fullImport.seconds.toFixed(1)} s, export ${firstExport.seconds.toFixed(1)} s`)

// Baselines, in the same run.
const ndjsonBytes = (await Promise.all(files.map((file) => fs.stat(file)))).reduce((sum, stat) => sum + stat.size, 0)
const load = await bareLoad(files)
const copyOut = await bareCopyToCsv(database.url, site.siteId, path.join(dir, 'bare.csv'))
for (const file of files) await fs.rm(file)
console.log(`baselines: COPY in ${load.copy.toFixed(1)} s, INSERT…SELECT ${load.insert.toFixed(1)} s, COPY TO ${copyOut.toFixed(1)} s`)

// The small update: 1% changed, uploaded, `all` until success.
const change = path.join(dir, 'change-1.ndjson')
await writeChange(change, 1, 2463534242)
started = performance.now()
await site.uploadFile(change)
const smallUpload = seconds(started)
const smallRun = await site.runAction('all')
// The full file is written right after the export commits, by the server: counted in the cycle.
const rewrite = await fileStored(channelId)
const small = smallUpload + smallRun.seconds + rewrite
console.log(`small update: upload ${smallUpload.toFixed(2)} s, all ${smallRun.seconds.toFixed(2)} s, file written ${rewrite.toFixed(2)} s after`)

// Its feed: the first download after the update, then the same unchanged feed again.
const url = feedUrl
const firstDownload = await download(url, false)
const repeated = await download(url, false)
const firstGzip = await download(url, true)
const repeatedGzip = await download(url, true)
console.log(
  `downloads: first ${firstDownload.seconds.toFixed(2)} s, again ${repeated.seconds.toFixed(2)} s, gzip ${firstGzip.seconds.toFixed(2)} / ${repeatedGzip.seconds.toFixed(2)} s`,
)

// An incremental import on its own: another 1%.
const change2 = path.join(dir, 'change-2.ndjson')
await writeChange(change2, 2, 88172645)
await site.uploadFile(change2)
const smallImport = await site.importRun()
console.log(`incremental import (1%): ${smallImport.seconds.toFixed(2)} s`)

// The weight of the site's data on disk (one channel so far), after the hourly cleanup.
const sizesBeforeCleanup = await siteTableSizes(database.db)
await cleanupAsHourly(database.db)
const sizes = await siteTableSizes(database.db)
const stageShares = await stageShareLines(database.db)
const diskBytes = sizes.reduce((sum, s) => sum + s.total, 0)
console.log([...sizeLines(sizes, ndjsonBytes, sizesBeforeCleanup), '', ...stageShares].join('\n'))

// Issue 24 and 31: a Google Shopping channel against the same channel without checks (cycle-google.ts).
// Its TSV channels of the Google attributes are made here, for the rules section too.
// Issue 24: the same TSV feed through a channel without checks (A, generic) and one with Google
// Shopping's (B), so that the ratio is the cost of validation alone. Issue 31: B rewrites values on
// every row, as shops write them: availability "in stock" and "out of stock" become Google's
// in_stock and out_of_stock, and bare prices get ' EUR'.
const googleMapping = [
  ...['id', 'title', 'description', 'link', 'image_link', 'availability'].map((column) => ({ column, source: column })),
  { column: 'condition', value: 'new' },
  ...['price', 'sale_price', 'brand', 'gtin', 'color', 'size'].map((column) => ({ column, source: column })),
  { column: 'product_type', source: 'category' },
  { column: 'google_product_category', value: '1604' },
]
async function createTsvChannel(name: string, extra: Record<string, string>): Promise<string> {
  const body = { name, format: 'tsv', mapping: googleMapping, filenames: [{ type: null, filename: `${name}.tsv` }], ...extra }
  const created = (await site.call('POST', `/platform/v2/sites/${site.siteId}/channels`, site.platform, JSON.stringify(body))) as { Channels: { id: string }[] }
  return created.Channels[0]?.id ?? ''
}
const channelSections = { site, database, dir, createTsvChannel, writeChange, exportUntilStored }
// --core: the cycle alone, without the Google and rules sections (at 5,000,000 rows they take most of an hour).
const NOT_RUN = ['### Google Shopping channel (issue 24) and transformation rules (issue 32)', '', 'Not run in this run (`--core`).', '']
const googleLines = CORE ? [] : await googleCycle(channelSections)

// Issue 32: ten typical rules on the site and a Google channel, against the same channel without them.
const rulesLines = CORE ? NOT_RUN : await rulesCycle({ ...channelSections, identityChannelId: channelId, fullImportSeconds: fullImport.seconds })

const peak = rss.stop()
await server.stop()
await database.close()
await fs.rm(dir, { recursive: true, force: true })

const verdict = (value: number, target: number) => (value <= target ? 'met' : '**not met**')
const ratios = {
  cycle: small / full,
  download: firstDownload.seconds / repeated.seconds,
  gzipDownload: repeatedGzip.seconds / repeated.seconds,
  importShare: smallImport.seconds / fullImport.seconds,
  exportRatio: fullExport / copyOut,
  importRatio: fullImport.seconds / load.insert,
}
const rowsText = ROWS.toLocaleString('en')
const lines = [
  `## ${rowsText} rows`,
  '',
  `Run with \`npm run bench:cycle -- --rows ${ROWS}${CORE ? ' --core' : ''}\` on ${new Date().toISOString().slice(0, 10)}: ${machineLine()}.`,
  `Embedded Postgres (durable settings), the compiled server as a child process; 15 attributes, ~500 bytes per row; ${CHANGED.toLocaleString('en')} rows (1%) per update.`,
  '',
  '| measure | seconds |',
  '|---|---:|',
  `| full cycle: upload (${files.length} parts) + import + first export of a CSV channel of every column | ${f(full, 1)} (${f(upload, 1)} + ${f(fullImport.seconds, 1)} + ${f(firstExport.seconds, 1)}) |`,
  `| full export counted until the feed downloads at full speed: export + (file stored after the first download's start − a repeated download) | ${f(fullExport, 1)} (${f(firstExport.seconds, 1)} + ${f(fullStored)} − ${f(fullRepeatedDownload.seconds)}) |`,
  `| small-update cycle: upload of 1% + \`all\` until success + the full file's writing after it | ${f(small)} (${f(smallUpload)} + ${f(smallRun.seconds)} + ${f(rewrite)}) |`,
  `| incremental import of another 1% | ${f(smallImport.seconds)} |`,
  `| feed download after the update, identity: first / repeated | ${f(firstDownload.seconds)} / ${f(repeated.seconds)} (${(firstDownload.bytes / 1e6).toFixed(0)} MB) |`,
  `| feed download, gzip: first / repeated | ${f(firstGzip.seconds)} / ${f(repeatedGzip.seconds)} (${(repeatedGzip.bytes / 1e6).toFixed(0)} MB) |`,
  `| baseline: bare COPY of the upload files into a text column | ${f(load.copy)} |`,
  `| baseline: bare INSERT … SELECT into a keyed jsonb table | ${f(load.insert)} |`,
  `| baseline: bare COPY (SELECT the 15 columns) TO a CSV file | ${f(copyOut)} |`,
  '',
  '| ratio | value | target | |',
  '|---|---:|---:|---|',
  `| small-update cycle / full cycle | ${f(ratios.cycle, 3)} | ≤ 0.05 (stretch 0.02) | ${verdict(ratios.cycle, 0.05)} |`,
  `| first download after a small update / repeated download | ${f(ratios.download)} | ≤ 1.5 | ${verdict(ratios.download, 1.5)} |`,
  `| incremental import (1%) / full import | ${f(ratios.importShare, 3)} | ≤ 0.05 | ${verdict(ratios.importShare, 0.05)} |`,
  `| full export (until the feed downloads at full speed) / bare COPY … TO CSV | ${f(ratios.exportRatio)} | ≤ 2.0 | ${verdict(ratios.exportRatio, 2)} |`,
  `| full import / bare INSERT … SELECT | ${f(ratios.importRatio)} | ≤ 1.5 | ${verdict(ratios.importRatio, 1.5)} |`,
  `| repeated download, gzip / identity time | ${f(ratios.gzipDownload)} | ≤ 1.5 | ${verdict(ratios.gzipDownload, 1.5)} |`,
  `| on-disk bytes of the site's data / its NDJSON upload | ${f(diskBytes / ndjsonBytes)} | ≤ 3.0 | ${verdict(diskBytes / ndjsonBytes, 3)} |`,
  `| peak server RSS | ${Math.round(peak)} MB | < 300 MB | ${verdict(peak, 300)} |`,
  '',
  `### On disk after the hourly cleanup (${(ndjsonBytes / 1e6).toFixed(0)} MB of NDJSON uploaded; one CSV channel)`,
  '',
  'After the two 1% updates, the cleanup releasing every applied upload, and a `VACUUM` of each table (what autovacuum does next), repeated while it shrinks the table, with autovacuum held off meanwhile (a session waiting for the table stops a `VACUUM` from giving pages back); the first column is the total right after the last import, before the cleanup.',
  '',
  ...sizeLines(sizes, ndjsonBytes, sizesBeforeCleanup),
  '',
  ...stageShares,
  '',
  ...googleLines,
  ...rulesLines,
]
console.log(lines.join('\n'))
await writeResult('cycle.md', await withSection(path.join('bench', 'results', 'cycle.md'), ROWS, lines.join('\n')))

/**
 * cycle.md holds one section per catalog size, each between markers, and notes written by hand:
 * a run replaces its own size's section and keeps the rest.
 */
async function withSection(file: string, rows: number, section: string): Promise<string> {
  const [open, close] = [`<!-- rows:${rows} -->`, `<!-- /rows:${rows} -->`]
  const block = `${open}\n${section}\n${close}`
  const current = await fs.readFile(file, 'utf8').catch(() => '# Cycle benchmark\n\n## Notes\n')
  const [start, end] = [current.indexOf(open), current.indexOf(close)]
  if (start !== -1 && end > start) return current.slice(0, start) + block + current.slice(end + close.length)
  const notes = current.indexOf('\n## Notes')
  return notes === -1 ? `${current}\n${block}\n` : `${current.slice(0, notes)}\n${block}\n${current.slice(notes)}`
}
