// Run turnaround (issue 36, one claim mechanism): how long a client waits for a small run, against
// the run's own time (its started_at to finished_at, the baseline measured in the same run), and
// how long a run waits to be claimed: one site's imports one after another, then bursts of one
// import on each of eight sites (eight accounts) at once, RUN_CONCURRENCY 2. The compiled server as a
// child process on the embedded Postgres.
import os from 'node:os'
import fs from 'node:fs/promises'
import path from 'node:path'
import { benchDatabase, createBenchSite, machineLine, median, percentile, startServerProcess, writeResult, type BenchSite } from './support.js'

const SEQUENTIAL = 40
const SITES = 8
const BURSTS = 10

const database = await benchDatabase()
const server = await startServerProcess(database.url, { RUN_CONCURRENCY: '2' })
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-runs-'))
const sites: BenchSite[] = []
for (let i = 0; i < SITES; i++) {
  const site = await createBenchSite(database, server, dir)
  const rows = Array.from({ length: 20 }, (_, k) => JSON.stringify({ id: `p-${k}`, title: `Product ${k}` })).join('\n')
  await site.call('POST', `/streams/${site.streamId}/products`, { ...site.bearer, 'content-type': 'application/x-ndjson' }, rows)
  sites.push(site)
}

interface Turnaround {
  /** POST /process until the polled status says it ended. */
  clientMs: number
  /** The run's own time: its row's started_at to finished_at. */
  ownMs: number
  /** From the run's creation to its start: the time it waited to be claimed. */
  waitMs: number
}

async function importOnce(site: BenchSite): Promise<Turnaround> {
  const started = performance.now()
  const queued = (await site.call('POST', `/platform/v2/process/${site.siteId}`, site.platform, JSON.stringify({ action: 'import' }))) as { process_id: string }
  for (;;) {
    const status = (await site.call('GET', `/platform/v2/sites/${site.siteId}/status/${queued.process_id}`, site.platform)) as { status: string }
    if (status.status === 'success') break
    if (status.status === 'failed') throw new Error(`run ${queued.process_id} failed`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  const clientMs = performance.now() - started
  const run = await database.db
    .selectFrom('run')
    .select(['created_at', 'started_at', 'finished_at'])
    .where('pid', '=', queued.process_id)
    .executeTakeFirstOrThrow()
  const at = (date: Date | null) => date?.getTime() ?? 0
  return { clientMs, ownMs: at(run.finished_at) - at(run.started_at), waitMs: at(run.started_at) - at(run.created_at) }
}

const sequential: Turnaround[] = []
for (let i = 0; i < SEQUENTIAL; i++) sequential.push(await importOnce(sites[0] as BenchSite))

const burst: Turnaround[] = []
let burstMs = 0
for (let round = 0; round < BURSTS; round++) {
  const started = performance.now()
  burst.push(...(await Promise.all(sites.map((site) => importOnce(site)))))
  burstMs += performance.now() - started
}

await server.stop()
await database.close()
await fs.rm(dir, { recursive: true, force: true })

const ms = (value: number) => value.toFixed(1)
const row = (label: string, runs: Turnaround[]) => {
  const pick = (key: keyof Turnaround) => runs.map((run) => run[key])
  const ratio = median(pick('clientMs')) / Math.max(1, median(pick('ownMs')))
  return `| ${label} | ${runs.length} | ${ms(median(pick('clientMs')))} | ${ms(percentile(pick('clientMs'), 0.95))} | ${ms(median(pick('ownMs')))} | ${ms(median(pick('waitMs')))} | ${ratio.toFixed(2)} |`
}
const throughput = (burst.length / (burstMs / 1000)).toFixed(1)
const lines = [
  '# Run turnaround',
  '',
  `\`npm run bench:runs\` on ${new Date().toISOString().slice(0, 10)}: ${machineLine()}. Embedded Postgres, the compiled server as a child process, RUN_CONCURRENCY 2, RUN_POLL_SECONDS 2 (a run queued in the process that claims it wakes its worker); imports of 20 rows, the client polling every 5 ms.`,
  '',
  '| runs | n | client waits, median ms | p95 ms | the run itself (baseline), median ms | queued until claimed, median ms | client / run itself |',
  '|---|---:|---:|---:|---:|---:|---:|',
  row('one site, one run after another', sequential),
  row(`bursts: ${SITES} sites of ${SITES} accounts at once`, burst),
  '',
  `Bursts: ${throughput} runs per second.`,
  '',
]
console.log(lines.join('\n'))
await writeResult('runs.md', lines.join('\n'))
