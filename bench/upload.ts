// npm run bench:upload — see README "Benchmarks". Uploads 200,000 realistic rows in one NDJSON
// request (plain and gzip) to the real server, and in the same run loads the same file with a bare
// COPY into a one-column text table: the physical limit the upload is measured against.
import { createReadStream } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { createGzip } from 'node:zlib'
import { sql } from 'kysely'
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { createAccount } from '../src/accounts/accounts.js'
import { benchDatabase, machineLine, median, sampleRss, startServerProcess, writeResult } from './support.js'
import { writeNdjson } from './product-rows.js'

const ROWS = Number(process.env.BENCH_ROWS ?? 200_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
// About 195 MB: the largest body under the default MAX_UPLOAD_BYTES (200 MiB).
const BIG_ROWS = Number(process.env.BENCH_BIG_ROWS ?? 330_000)

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'catalog-upload-bench-'))
const plainFile = path.join(dir, 'rows.ndjson')
const gzipFile = path.join(dir, 'rows.ndjson.gz')
const bigFile = path.join(dir, 'big.ndjson')
const bytes = await writeNdjson(plainFile, ROWS)
await pipeline(createReadStream(plainFile), createGzip(), (await fs.open(gzipFile, 'w')).createWriteStream())
const gzipBytes = (await fs.stat(gzipFile)).size
console.log(`${ROWS} rows, ${(bytes / 1e6).toFixed(1)} MB (${(gzipBytes / 1e6).toFixed(1)} MB gzip)`)

const database = await benchDatabase()
const server = await startServerProcess(database.url, process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {})
const account = await createAccount(database.db, 'bench')
const { token } = account.token
const stream = await post(`${server.baseUrl}/streams`, 'application/vnd.api+json', JSON.stringify({ data: { type: 'stream', attributes: { name: 'bench' } } }))
const streamId = (stream.json as { data: { id: string } }).data.id

async function post(url: string, contentType: string, body: RequestInit['body'], encoding?: string, key?: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'content-type': contentType }
  if (encoding) headers['content-encoding'] = encoding
  if (key) headers['idempotency-key'] = key
  const response = await fetch(url, { method: 'POST', headers, body, duplex: 'half' } as RequestInit)
  return { status: response.status, json: (await response.json()) as unknown }
}

async function upload(file: string, encoding?: string, key?: string): Promise<{ seconds: number; peakMb: number }> {
  await sql`TRUNCATE batch_row`.execute(database.db)
  const rss = sampleRss(server.pid)
  const started = performance.now()
  const body = createReadStream(file) as unknown as RequestInit['body']
  const result = await post(`${server.baseUrl}/streams/${streamId}/products`, 'application/x-ndjson', body, encoding, key)
  const seconds = (performance.now() - started) / 1000
  const peakMb = rss.stop()
  const attributes = (result.json as { data?: { attributes?: { stages?: { upload?: { successCount?: number } } } } }).data?.attributes
  if (result.status !== 202 || attributes?.stages?.upload?.successCount === undefined) {
    throw new Error(`upload failed: ${result.status} ${JSON.stringify(result.json).slice(0, 300)}`)
  }
  return { seconds, peakMb }
}

async function bareCopy(): Promise<number> {
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  await client.query('DROP TABLE IF EXISTS bench_copy; CREATE TABLE bench_copy (line text)')
  const started = performance.now()
  await client.query('BEGIN')
  await pipeline(createReadStream(plainFile), client.query(copyFrom('COPY bench_copy (line) FROM STDIN')))
  await client.query('COMMIT')
  const seconds = (performance.now() - started) / 1000
  await client.query('DROP TABLE bench_copy')
  await client.end()
  return seconds
}

const copyTimes: number[] = []
const plain: { seconds: number; peakMb: number }[] = []
const gzip: { seconds: number; peakMb: number }[] = []
// Each with a new Idempotency-Key: the body hashed as it arrives, the key claimed and its answer stored with the batch.
const keyed: { seconds: number; peakMb: number }[] = []
// Interleaved, so that a noisy neighbour hurts both sides alike.
for (let run = 0; run < RUNS; run++) {
  copyTimes.push(await bareCopy())
  plain.push(await upload(plainFile))
  keyed.push(await upload(plainFile, undefined, `bench-${run}-${Date.now()}`))
  gzip.push(await upload(gzipFile, 'gzip'))
  console.log(
    `run ${run + 1}: copy ${copyTimes.at(-1)?.toFixed(2)} s, upload ${plain.at(-1)?.seconds.toFixed(2)} s (${plain.at(-1)?.peakMb.toFixed(0)} MB), ` +
      `with a key ${keyed.at(-1)?.seconds.toFixed(2)} s, gzip ${gzip.at(-1)?.seconds.toFixed(2)} s (${gzip.at(-1)?.peakMb.toFixed(0)} MB)`,
  )
}

const bigBytes = await writeNdjson(bigFile, BIG_ROWS)
const big = await upload(bigFile)
await server.stop()
await database.close()
await fs.rm(dir, { recursive: true, force: true })

const copySeconds = median(copyTimes)
const plainSeconds = median(plain.map((r) => r.seconds))
const gzipSeconds = median(gzip.map((r) => r.seconds))
const keyedSeconds = median(keyed.map((r) => r.seconds))
const rate = (seconds: number, rows = ROWS) => Math.round(rows / seconds)
const peak = Math.max(...plain.map((r) => r.peakMb), ...keyed.map((r) => r.peakMb), ...gzip.map((r) => r.peakMb), big.peakMb)
const lines = [
  `# Upload benchmark`,
  '',
  `${new Date().toISOString().slice(0, 10)} · ${machineLine()} · median of ${RUNS} interleaved runs`,
  '',
  `${ROWS} rows of 15 attributes, ${(bytes / 1e6).toFixed(1)} MB NDJSON (${(gzipBytes / 1e6).toFixed(1)} MB gzip), one request each, over HTTP to the server process.`,
  '',
  '| what | seconds | rows/s | ratio to bare COPY (rate) |',
  '|---|---:|---:|---:|',
  `| bare \`COPY ... FROM STDIN\` into a one-column text table | ${copySeconds.toFixed(2)} | ${rate(copySeconds)} | 1.00 |`,
  `| upload, NDJSON | ${plainSeconds.toFixed(2)} | ${rate(plainSeconds)} | ${(copySeconds / plainSeconds).toFixed(2)} |`,
  `| upload, NDJSON, with an \`Idempotency-Key\` | ${keyedSeconds.toFixed(2)} | ${rate(keyedSeconds)} | ${(copySeconds / keyedSeconds).toFixed(2)} |`,
  `| upload, NDJSON gzip | ${gzipSeconds.toFixed(2)} | ${rate(gzipSeconds)} | ${(copySeconds / gzipSeconds).toFixed(2)} |`,
  `| upload, ${(bigBytes / 1e6).toFixed(0)} MB NDJSON (${BIG_ROWS} rows) | ${big.seconds.toFixed(2)} | ${rate(big.seconds, BIG_ROWS)} | — |`,
  '',
  `With an \`Idempotency-Key\` on every upload, the rate is ${(plainSeconds / keyedSeconds).toFixed(2)} of the same run's uploads without one (target ≥ 0.95).`,
  '',
  `Peak server memory (RSS) during the uploads: ${peak.toFixed(0)} MB.`,
  `Target: upload rate at least 0.60 of the bare COPY rate; memory under 300 MB; ${(bigBytes / 1e6).toFixed(0)} MB well inside 10 s.`,
  '',
]
console.log(`\n${lines.join('\n')}`)
await writeResult('upload.md', lines.join('\n'))
