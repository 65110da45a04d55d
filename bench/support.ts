import { spawn, type ChildProcess } from 'node:child_process'
import { createReadStream, createWriteStream, readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { sql } from 'kysely'
import pg from 'pg'
import { to as copyTo } from 'pg-copy-streams'
import { createAccount } from '../src/accounts/accounts.js'
import { createDb, type Db } from '../src/db/database.js'
import { ensureDatabase, startEmbeddedCluster, type EmbeddedCluster } from '../src/db/embedded.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { freePort } from '../src/db/free-port.js'
import { PRODUCT_COLUMNS, writeNdjson } from './product-rows.js'

export interface BenchDatabase {
  db: Db
  url: string
  close(): Promise<void>
}

/** BENCH_DATABASE_URL when set, otherwise an embedded cluster in a temp dir (durable settings). */
export async function benchDatabase(): Promise<BenchDatabase> {
  let cluster: EmbeddedCluster | undefined
  let dir: string | undefined
  let url = process.env.BENCH_DATABASE_URL
  if (!url) {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'catalog-bench-'))
    cluster = await startEmbeddedCluster(dir)
    await ensureDatabase(cluster, 'bench')
    url = cluster.urlFor('bench')
  }
  const db = createDb(url, 4)
  await migrateToLatest(db)
  return {
    db,
    url,
    close: async () => {
      await db.destroy()
      await cluster?.stop({ force: true })
      if (dir) await fs.rm(dir, { recursive: true, force: true })
    },
  }
}

export interface ServerProcess {
  baseUrl: string
  pid: number
  stop(): Promise<void>
}

/** The compiled server (`npm run build` first) as a child process, so that its memory can be sampled. */
export async function startServerProcess(databaseUrl: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const port = await freePort()
  const child: ChildProcess = spawn(process.execPath, ['dist/src/main.js', 'serve'], {
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const baseUrl = `http://127.0.0.1:${port}`
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) break
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    baseUrl,
    pid: child.pid ?? 0,
    stop: async () => {
      child.kill('SIGTERM')
      await new Promise((r) => child.once('exit', r))
    },
  }
}

/** Samples a process's resident memory every 25 ms until stopped; returns the peak in MB. */
export function sampleRss(pid: number): { stop(): number } {
  let peak = 0
  const read = () => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
      peak = Math.max(peak, kb / 1024)
    } catch {
      // process gone
    }
  }
  read()
  const timer = setInterval(read, 25)
  return {
    stop: () => {
      clearInterval(timer)
      read()
      return peak
    },
  }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

export async function writeResult(name: string, markdown: string): Promise<void> {
  await fs.mkdir('bench/results', { recursive: true })
  await fs.writeFile(`bench/results/${name}`, markdown)
  console.log(`\nwrote bench/results/${name}`)
}

export function machineLine(): string {
  return `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`
}

export function percentile(values: number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))] ?? 0
}

type Headers = Record<string, string>

export interface ImportTiming {
  /** What a client waits: from `POST /process` until the polled status says `success`. */
  seconds: number
  /** The run itself, from the process row's started_at to finished_at. */
  serverSeconds: number
  peakMb: number
}

/** An account with a project, a site and an active stream feeding the site, made through the real API. */
export interface BenchSite {
  siteId: string
  streamId: string
  /** Headers of the platform API: the account's X-Auth-Token and a JSON content type. */
  platform: Headers
  /** The account's bearer token header, for the stream interface. */
  bearer: Headers
  /** A request to the server; a status of 300 or more throws. */
  call(method: string, url: string, headers: Headers, body?: RequestInit['body']): Promise<Record<string, unknown>>
  /** One NDJSON upload of a file to the stream interface. */
  uploadFile(file: string): Promise<void>
  /** Rows `0 .. rows - 1` of product-rows.ts in NDJSON requests of 200,000 rows; returns the seconds spent uploading. */
  uploadRows(rows: number): Promise<number>
  /** POST /process (import) and poll its status until the run ended. */
  importRun(): Promise<ImportTiming>
  /** POST /process with any action, and poll its status until the run ended. */
  runAction(action: string, id?: string): Promise<ImportTiming>
}

// Each upload stays under the default MAX_UPLOAD_BYTES (200 MiB): about 118 MB per 200,000 rows.
export const ROWS_PER_UPLOAD = 200_000

export async function createBenchSite(database: BenchDatabase, server: ServerProcess, dir: string): Promise<BenchSite> {
  const account = await createAccount(database.db, 'bench')
  const bearer = { authorization: `Bearer ${account.token.token}` }
  const platform = { 'x-auth-token': account.credential.xAuthToken, 'content-type': 'application/json' }

  async function call(method: string, url: string, headers: Headers, body?: RequestInit['body']) {
    const response = await fetch(`${server.baseUrl}${url}`, { method, headers, body, duplex: 'half' } as RequestInit)
    const json = (await response.json()) as Record<string, unknown>
    if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(json).slice(0, 300)}`)
    return json
  }

  const project = (await call('POST', '/platform/v2/projects', platform, JSON.stringify({ name: 'bench' }))) as { Projects: { id: string }[] }
  const site = (await call('POST', '/platform/v2/sites', platform, JSON.stringify({ title: 'bench', project_id: project.Projects[0]?.id }))) as {
    Sites: { id: string }[]
  }
  const siteId = site.Sites[0]?.id ?? ''
  const streamBody = JSON.stringify({ data: { type: 'stream', attributes: { name: 'bench' } } })
  const stream = (await call('POST', '/streams', { ...bearer, 'content-type': 'application/vnd.api+json' }, streamBody)) as { data: { id: string } }
  const streamId = stream.data.id
  await call(
    'POST',
    `/platform/v2/sites/${siteId}/streams`,
    platform,
    JSON.stringify({ import_type: 1, description: 'bench', stream_id: streamId, status: 'active' }),
  )

  async function uploadFile(file: string): Promise<void> {
    await call(
      'POST',
      `/streams/${streamId}/products`,
      { ...bearer, 'content-type': 'application/x-ndjson' },
      createReadStream(file) as unknown as RequestInit['body'],
    )
  }

  async function uploadRows(rows: number): Promise<number> {
    console.log(`writing ${rows} rows in ${Math.ceil(rows / ROWS_PER_UPLOAD)} files`)
    let seconds = 0
    for (let from = 0; from < rows; from += ROWS_PER_UPLOAD) {
      const file = path.join(dir, `part-${from}.ndjson`)
      await writeNdjson(file, Math.min(ROWS_PER_UPLOAD, rows - from), 0, from)
      const started = performance.now()
      await uploadFile(file)
      seconds += (performance.now() - started) / 1000
      await fs.rm(file)
    }
    console.log(`uploaded in ${seconds.toFixed(1)} s`)
    return seconds
  }

  async function runAction(action: string, id?: string): Promise<ImportTiming> {
    await sql`CHECKPOINT`.execute(database.db)
    const rss = sampleRss(server.pid)
    const started = performance.now()
    const run = (await call('POST', `/platform/v2/process/${siteId}`, platform, JSON.stringify({ action, id }))) as { process_id: string }
    for (;;) {
      const status = (await call('GET', `/platform/v2/sites/${siteId}/status/${run.process_id}`, platform)) as { status: string; message: string }
      if (status.status === 'failed') throw new Error(`${action} failed: ${status.message}`)
      if (status.status === 'success') break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const seconds = (performance.now() - started) / 1000
    const row = await database.db
      .selectFrom('run')
      .select(sql<number>`extract(epoch from finished_at - started_at)`.as('seconds'))
      .where('pid', '=', run.process_id)
      .executeTakeFirstOrThrow()
    return { seconds, serverSeconds: Number(row.seconds), peakMb: rss.stop() }
  }

  return { siteId, streamId, platform, bearer, call, uploadFile, uploadRows, importRun: () => runAction('import'), runAction }
}

/**
 * The physical limit an export is measured against: the site's import stage, every product column,
 * written by Postgres as CSV into `file`, with no export logic at all. Returns the seconds it took.
 */
export async function bareCopyToCsv(databaseUrl: string, siteId: string, file: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const columns = PRODUCT_COLUMNS.map((c) => `data->>${client.escapeLiteral(c)}`).join(', ')
    const query = `COPY (SELECT ${columns} FROM stage_product WHERE site_id = ${Number(siteId)} AND stage = 'import' AND stage_id = 0 ORDER BY product_id)
      TO STDOUT WITH (FORMAT csv, HEADER)`
    const started = performance.now()
    await pipeline(client.query(copyTo(query)), createWriteStream(file))
    return (performance.now() - started) / 1000
  } finally {
    await client.end()
  }
}
