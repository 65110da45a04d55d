// npm run bench:bad-lines [-- --lines 200000] — see README "Benchmarks". What a bad line costs an
// upload next to a good one (issue 10, finding 7: a mostly-bad upload used to take ~30 times the time
// of good lines per line). Uploads N good lines and N distinct bad lines (none repeats, so none is
// answered from the lines an upload already refused: each is parsed) to the real server, in turns,
// and reports the time per line of each and their ratio. The good lines are the baseline.
import { sql } from 'kysely'
import { createAccount } from '../src/accounts/accounts.js'
import { benchDatabase, machineLine, median, startServerProcess, writeResult } from './support.js'

const linesArg = process.argv.indexOf('--lines')
const LINES = Number(linesArg > 0 ? process.argv[linesArg + 1] : 200_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const TARGET_RATIO = 3

if (!Number.isInteger(LINES) || LINES < 2) throw new Error(`--lines must be an integer of at least 2, not ${process.argv[linesArg + 1]}`)

// The lines of test/stream-api/bad-lines.test.ts: three attributes per good line; the bad ones
// alternate an unterminated string (the control-character error) and text that is not JSON.
const good = Array.from({ length: LINES }, (_, i) => `{"id":"g${i}","title":"Product ${i}","price":"${i}.99"}`).join('\n')
const bad = Array.from({ length: LINES }, (_, i) => (i % 2 === 0 ? `{"id":"b${i}","title":"Product ${i}` : `oops ${i}`)).join('\n')

const database = await benchDatabase()
const server = await startServerProcess(database.url, { RATE_LIMIT_PRODUCTS: '1000000' })
const account = await createAccount(database.db, 'bench')
const authorization = `Bearer ${account.token.token}`

async function post(url: string, contentType: string, body: string): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${server.baseUrl}${url}`, { method: 'POST', headers: { authorization, 'content-type': contentType }, body })
  return { status: response.status, json: (await response.json()) as unknown }
}

const stream = await post('/streams', 'application/vnd.api+json', JSON.stringify({ data: { type: 'stream', attributes: { name: 'bench' } } }))
const streamId = (stream.json as { data: { id: string } }).data.id

interface UploadCounts {
  successCount: number
  errorCount: number
}

/** One upload of `body`; returns its seconds, after checking that every line was counted as `expected`. */
async function upload(body: string, expected: UploadCounts): Promise<number> {
  await sql`TRUNCATE batch_row`.execute(database.db)
  const started = performance.now()
  const result = await post(`/streams/${streamId}/products`, 'application/x-ndjson', body)
  const seconds = (performance.now() - started) / 1000
  const counts = (result.json as { data?: { attributes?: { stages?: { upload?: UploadCounts } } } }).data?.attributes?.stages?.upload
  if (result.status !== 202 || counts?.successCount !== expected.successCount || counts.errorCount !== expected.errorCount) {
    throw new Error(`upload answered ${result.status} ${JSON.stringify(result.json).slice(0, 300)}`)
  }
  return seconds
}

await upload('{"id":"warm-up"}\n', { successCount: 1, errorCount: 0 })
const goodTimes: number[] = []
const badTimes: number[] = []
// Interleaved, so that a noisy neighbour hurts both sides alike.
for (let run = 0; run < RUNS; run++) {
  goodTimes.push(await upload(good, { successCount: LINES, errorCount: 0 }))
  badTimes.push(await upload(bad, { successCount: 0, errorCount: LINES }))
  console.log(`run ${run + 1}: ${LINES} good lines ${goodTimes.at(-1)?.toFixed(2)} s, ${LINES} bad lines ${badTimes.at(-1)?.toFixed(2)} s`)
}
await server.stop()
await database.close()

const goodSeconds = median(goodTimes)
const badSeconds = median(badTimes)
const ratio = badSeconds / goodSeconds
const perLineUs = (seconds: number) => ((seconds / LINES) * 1e6).toFixed(1)
const mb = (text: string) => (Buffer.byteLength(text) / 1e6).toFixed(1)
const times = (values: number[]) => values.map((s) => s.toFixed(2)).join(', ')
const lines = [
  '# Bad-lines benchmark',
  '',
  `Run with \`npm run bench:bad-lines -- --lines ${LINES}\` on ${new Date().toISOString().slice(0, 10)}: ${machineLine()}. Median of ${RUNS} interleaved runs.`,
  'Embedded Postgres (durable settings), the compiled server as a child process; one NDJSON request per upload, timed until its 202 is read.',
  '',
  '| upload | MB | seconds (runs) | µs per line | ratio to good lines |',
  '|---|---:|---:|---:|---:|',
  `| baseline: ${LINES} good lines of 3 attributes, all stored | ${mb(good)} | ${goodSeconds.toFixed(2)} (${times(goodTimes)}) | ${perLineUs(goodSeconds)} | 1.00 |`,
  `| ${LINES} distinct bad lines (unterminated string / not JSON, alternating), none stored | ${mb(bad)} | ${badSeconds.toFixed(2)} (${times(badTimes)}) | ${perLineUs(badSeconds)} | **${ratio.toFixed(2)}** |`,
  '',
  `Target: a bad line costs at most ${TARGET_RATIO}× a good one: **${ratio <= TARGET_RATIO ? 'met' : 'not met'}** (${ratio.toFixed(2)}×; issue 10 found ~30×).`,
  '',
]
console.log(`\n${lines.join('\n')}`)
await writeResult('bad-lines.md', lines.join('\n'))
