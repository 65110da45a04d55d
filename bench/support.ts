import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createDb, type Db } from '../src/db/database.js'
import { ensureDatabase, startEmbeddedCluster, type EmbeddedCluster } from '../src/db/embedded.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { freePort } from '../src/net/free-port.js'

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
