// What the shared rate-limit store adds to a request (issue 14): the p50 and p99 of one
// PostgresRateLimitStore.hit (the upsert every request makes before anything else), alone and with
// 8 requests at once, next to the floor of any database call, a `SELECT 1` on the same pool, and
// the in-process store. Target: under 1 ms at p50.
import { sql } from 'kysely'
import { PostgresRateLimitStore } from '../src/http/postgres-rate-limit.js'
import { MemoryRateLimitStore, type RateLimitStore } from '../src/http/rate-limit.js'
import { benchDatabase, machineLine, percentile, writeResult } from './support.js'

const HITS = 5000
const database = await benchDatabase()

async function timed(count: number, call: (i: number) => Promise<unknown>): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < count; i++) {
    const started = performance.now()
    await call(i)
    times.push(performance.now() - started)
  }
  return times
}

const hitOf = (store: RateLimitStore) => (i: number) => store.hit(`bench token-${i % 100} GET /streams`, 1_000_000, new Date())
const postgres = new PostgresRateLimitStore(database.db)
await timed(500, hitOf(postgres))
const select = await timed(HITS, () => sql`SELECT 1`.execute(database.db))
const shared = await timed(HITS, hitOf(postgres))
const memory = await timed(HITS, hitOf(new MemoryRateLimitStore()))
const concurrent = (await Promise.all(Array.from({ length: 8 }, () => timed(HITS / 8, hitOf(postgres))))).flat()
await database.close()

const row = (label: string, times: number[]) => `| ${label} | ${percentile(times, 0.5).toFixed(3)} | ${percentile(times, 0.99).toFixed(3)} |`
const p50 = percentile(shared, 0.5)
const lines = [
  '# Rate-limit store benchmark',
  '',
  `Run with \`npm run bench:rate-limit\` on ${new Date().toISOString().slice(0, 10)}: ${machineLine()}. Embedded Postgres (durable settings), a pool of 4.`,
  `${HITS} calls each over 100 keys, one at a time unless said.`,
  '',
  '| call | p50 ms | p99 ms |',
  '|---|---:|---:|',
  row('baseline: `SELECT 1` on the same pool', select),
  row('PostgresRateLimitStore.hit (one upsert)', shared),
  row('PostgresRateLimitStore.hit, 8 at once', concurrent),
  row('MemoryRateLimitStore.hit (one process only)', memory),
  '',
  `Added per request at p50: ${p50.toFixed(3)} ms (target < 1 ms: ${p50 < 1 ? 'met' : '**not met**'}), ${(p50 / percentile(select, 0.5)).toFixed(2)}× a bare \`SELECT 1\`.`,
  '',
]
console.log(lines.join('\n'))
await writeResult('rate-limit.md', lines.join('\n'))
