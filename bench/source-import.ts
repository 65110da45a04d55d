// npm run bench:source — see README "Benchmarks". The same BENCH_ROWS (1,000,000) products reach two
// sites of the compiled server, in the same run: one through its stream (NDJSON uploads, then an
// import: what a client waits for both), the other from a feed URL, a CSV file served by a local
// HTTP server that the import fetches, parses and applies. Target: the feed URL's rate is at least
// half the stream's. A second import of the unchanged file shows what a fetch costs that reads nothing.
import { createReadStream, createWriteStream } from 'node:fs'
import { once } from 'node:events'
import fs from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { benchDatabase, createBenchSite, machineLine, startServerProcess, writeResult, type BenchSite } from './support.js'
import { PRODUCT_COLUMNS, productRow } from './product-rows.js'

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000)

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'catalog-source-bench-'))
const csvFile = path.join(dir, 'catalog.csv')
const csvBytes = await writeCsv(csvFile, ROWS)
console.log(`CSV: ${ROWS} rows, ${(csvBytes / 1e6).toFixed(0)} MB`)
const files = http.createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'text/csv', 'content-length': String(csvBytes) })
  createReadStream(csvFile).pipe(response)
})
await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve))
const url = `http://127.0.0.1:${(files.address() as AddressInfo).port}/catalog.csv`

const database = await benchDatabase()
const server = await startServerProcess(database.url, { RUN_CONCURRENCY: '1', RUN_POLL_SECONDS: '0.5', ALLOW_PRIVATE_DESTINATIONS: 'true' })

// The stream: uploads, then the import.
const streamSite = await createBenchSite(database, server, dir)
const uploadSeconds = await streamSite.uploadRows(ROWS)
const streamImport = await streamSite.importRun()
const streamSeconds = uploadSeconds + streamImport.seconds
console.log(`stream: upload ${uploadSeconds.toFixed(2)} s + import ${streamImport.seconds.toFixed(2)} s`)

// The feed URL: the bench site's stream source is replaced by the feed URL source.
const sourceSite = await createBenchSite(database, server, dir)
await onlyFeedUrl(sourceSite)
const sourceImport = await sourceSite.importRun()
console.log(`feed URL: import ${sourceImport.seconds.toFixed(2)} s (peak RSS ${Math.round(sourceImport.peakMb)} MB)`)
const unchanged = await sourceSite.importRun()
console.log(`feed URL unchanged: import ${unchanged.seconds.toFixed(2)} s`)

const count = await database.db.selectFrom('site_stage').select('row_count').where('site_id', '=', sourceSite.siteId).executeTakeFirstOrThrow()
if (Number(count.row_count) !== ROWS) throw new Error(`the feed URL site holds ${count.row_count} products, expected ${ROWS}`)

await server.stop()
await database.close()
files.close()
await fs.rm(dir, { recursive: true, force: true })

const ratio = streamSeconds / sourceImport.seconds
const rate = (seconds: number) => Math.round(ROWS / seconds).toLocaleString('en')
const lines = [
  '# Feed URL source benchmark',
  '',
  `Run with \`npm run bench:source\` on ${new Date().toISOString().slice(0, 10)}: ${machineLine()}.`,
  `Embedded Postgres (durable settings), the compiled server as a child process, ${ROWS.toLocaleString('en')} products of 15 attributes,`,
  `as NDJSON uploads to a stream and as one ${(csvBytes / 1e6).toFixed(0)} MB CSV file on a local HTTP server. Times are what a client waits.`,
  '',
  '| path | seconds | products/s | ratio |',
  '|---|---:|---:|---:|',
  `| baseline: stream uploads (${uploadSeconds.toFixed(2)} s) + import (${streamImport.seconds.toFixed(2)} s) | ${streamSeconds.toFixed(2)} | ${rate(streamSeconds)} | 1.00 |`,
  `| feed URL: one import that fetches, parses and applies the CSV | ${sourceImport.seconds.toFixed(2)} | ${rate(sourceImport.seconds)} | **${ratio.toFixed(2)}** of the stream's rate (target ≥ 0.5) |`,
  `| feed URL again, the same file from a server without validators (downloaded and hashed, not parsed) | ${unchanged.seconds.toFixed(2)} | | |`,
  '',
  `Peak server RSS during the feed URL import: ${Math.round(sourceImport.peakMb)} MB (the stream's import: ${Math.round(streamImport.peakMb)} MB).`,
  '',
]
await writeResult('source-import.md', lines.join('\n'))
console.log(lines.join('\n'))

/** Deletes the site's stream source and adds the feed URL source in its place. */
async function onlyFeedUrl(site: BenchSite): Promise<void> {
  const listed = (await site.call('GET', `/platform/v2/sites/${site.siteId}/sources`, site.platform)) as { Sources: { id: number }[] }
  for (const source of listed.Sources) await site.call('DELETE', `/platform/v2/sites/${site.siteId}/sources/${source.id}`, site.platform)
  await site.call('POST', `/platform/v2/sites/${site.siteId}/sources`, site.platform, JSON.stringify({ type: 'feed_url', url, description: 'bench' }))
}

/** The rows of product-rows.ts as a CSV file with a header, every value quoted as needed. */
async function writeCsv(file: string, rows: number): Promise<number> {
  const out = createWriteStream(file)
  let bytes = 0
  let buffer = `${PRODUCT_COLUMNS.join(',')}\n`
  for (let i = 0; i < rows; i++) {
    const row = JSON.parse(productRow(i)) as Record<string, unknown>
    buffer += `${PRODUCT_COLUMNS.map((name) => csvValue(String(row[name] ?? ''))).join(',')}\n`
    if (buffer.length > 1 << 20) {
      bytes += Buffer.byteLength(buffer)
      if (!out.write(buffer)) await once(out, 'drain')
      buffer = ''
    }
  }
  bytes += Buffer.byteLength(buffer)
  out.end(buffer)
  await once(out, 'finish')
  return bytes
}

function csvValue(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value
}
