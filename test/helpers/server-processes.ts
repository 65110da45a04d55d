import { spawn } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import fs from 'node:fs/promises'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import type { Db } from '../../src/db/database.js'
import { freePort } from '../../src/db/free-port.js'
import { STOP_TIMEOUT_MS, exitOf, waitUntilHealthy, type Child, type Exit } from './child-server.js'

// Several server processes as an operator runs them behind a load balancer: `node dist/src/main.js
// serve`, each with its own port and its own DATA_DIR (nothing shared through a disk), all on one
// DATABASE_URL. Their output is kept (the tail of it), not printed: a failed test shows it.

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const SERVER_ENTRY = path.join(repoRoot, 'dist', 'src', 'main.js')
// What a process printed, kept per process across its restarts; the tail of it is enough to tell why.
const OUTPUT_LIMIT = 256 * 1024
const BUILD_TIMEOUT_MS = 240_000

/**
 * Compiles src/ and migrations/ into dist/ (`npm run build`) when a compiled file is missing or older
 * than its source. CI's `npm ci` builds through the `prepare` script, so there this checks and does
 * nothing; a local run after an edit gets the code it edited, not a stale build.
 */
export async function ensureBuilt(): Promise<void> {
  if (!isBuildStale()) return
  const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc')
  const build = spawn(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  build.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  build.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const exited = new Promise<Exit>((resolve) => build.on('close', (code, signal) => resolve({ code, signal })))
  const { code } = await exitOf({ process: build, output: () => output, exited }, BUILD_TIMEOUT_MS, 'npm run build')
  if (code !== 0) throw new Error(`npm run build failed (exit ${code}):\n${output}`)
}

function isBuildStale(): boolean {
  if (!existsSync(SERVER_ENTRY)) return true
  // tsc leaves a compiled file alone when its output would not change, but records every build.
  const buildInfo = path.join(repoRoot, 'dist', '.tsbuildinfo')
  const builtAt = existsSync(buildInfo) ? statSync(buildInfo).mtimeMs : 0
  for (const folder of ['src', 'migrations']) {
    for (const source of typeScriptFiles(path.join(repoRoot, folder))) {
      const compiled = path.join(repoRoot, 'dist', path.relative(repoRoot, source)).replace(/\.ts$/, '.js')
      if (!existsSync(compiled) || Math.max(statSync(compiled).mtimeMs, builtAt) < statSync(source).mtimeMs) return true
    }
  }
  return false
}

function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return typeScriptFiles(full)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : []
  })
}

// Every child of every ServerProcesses in this test process, killed if the test process exits
// without its afterAll (a crash, a timeout of the whole run), or loses the vitest process that
// forked it (killed, or its output pipe closed): no server outlives its test run.
const running = new Set<Child>()
const killRunning = () => {
  for (const child of running) child.process.kill('SIGKILL')
}
process.once('exit', killRunning)
process.once('disconnect', killRunning)

/** One server process; after a stop it can be started again, on a new port, with the same DATA_DIR. */
export class ServerProcess {
  private child: Child | undefined
  private port = 0
  private starts = 0
  private log = ''

  constructor(
    readonly name: string,
    readonly dataDir: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`
  }

  /**
   * The `application_name` of this process's database sessions (a new one on each start): what
   * finds them in pg_stat_activity, e.g. which process executes a run, or to end a killed one's.
   */
  get applicationName(): string {
    return `${this.name}-${this.starts}`
  }

  /** Started and not yet seen to exit. */
  get alive(): boolean {
    return this.child !== undefined && running.has(this.child)
  }

  get pid(): number | undefined {
    return this.child?.process.pid
  }

  /** Resolves when the current process has exited (at once when none runs). */
  get exited(): Promise<Exit> {
    return this.child?.exited ?? Promise.resolve({ code: null, signal: null })
  }

  /** Starts the process and waits until it answers GET /healthz with 200. */
  async start(): Promise<void> {
    if (this.alive) throw new Error(`${this.name} is running already`)
    this.starts++
    this.port = await freePort()
    const url = new URL(String(this.env.DATABASE_URL))
    url.searchParams.set('application_name', this.applicationName)
    const env = { ...this.env, DATABASE_URL: url.toString(), PORT: String(this.port), HOST: '127.0.0.1', DATA_DIR: this.dataDir }
    this.append(`\n----- ${this.applicationName}: node dist/src/main.js serve on port ${this.port}\n`)
    const child = spawn(process.execPath, [SERVER_ENTRY, 'serve'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => this.append(chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => this.append(chunk))
    const handle: Child = {
      process: child,
      output: () => this.log,
      exited: new Promise<Exit>((resolve) => {
        child.on('close', (code, signal) => {
          running.delete(handle)
          this.append(`\n----- ${this.name}: exited (code ${code}, signal ${signal})\n`)
          resolve({ code, signal })
        })
        child.on('error', (error) => {
          running.delete(handle)
          this.append(`\n----- ${this.name}: spawn failed: ${error.message}\n`)
          resolve({ code: null, signal: null })
        })
      }),
    }
    running.add(handle)
    this.child = handle
    await waitUntilHealthy(handle, this.baseUrl)
  }

  signal(signal: NodeJS.Signals): void {
    if (!this.child || !this.alive) throw new Error(`${this.name} is not running`)
    this.child.process.kill(signal)
  }

  /** Waits for the process to exit after a signal; kills it and fails after `boundMs`. */
  async stopped(boundMs = STOP_TIMEOUT_MS): Promise<Exit> {
    if (!this.child) return { code: null, signal: null }
    return exitOf(this.child, boundMs, this.name)
  }

  /** SIGKILL (no shutdown at all), then waits for the exit. */
  async kill(): Promise<Exit> {
    if (this.alive) this.signal('SIGKILL')
    return this.exited
  }

  output(): string {
    return this.log
  }

  private append(text: string): void {
    this.log += text
    if (this.log.length > OUTPUT_LIMIT * 2) this.log = `[...]${this.log.slice(-OUTPUT_LIMIT)}`
  }
}

export interface ServerProcessesOptions {
  databaseUrl: string
  /** Settings of every process (config.ts); PORT, HOST, DATA_DIR and DATABASE_URL are set per process. */
  env: Record<string, string>
}

/** `count` server processes on one database, each on its own port and DATA_DIR. */
export class ServerProcesses {
  private constructor(readonly all: ServerProcess[]) {}

  static async start(count: number, { databaseUrl, env }: ServerProcessesOptions): Promise<ServerProcesses> {
    const processes: ServerProcess[] = []
    for (let i = 1; i <= count; i++) {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `catalog-server-${i}-`))
      processes.push(new ServerProcess(`server-${i}`, dataDir, { ...process.env, ...env, DATABASE_URL: databaseUrl }))
    }
    const servers = new ServerProcesses(processes)
    try {
      await Promise.all(processes.map((server) => server.start()))
    } catch (error) {
      await servers.stop()
      throw error
    }
    return servers
  }

  /** The i-th process, counting round: spreads requests with a running counter. */
  at(i: number): ServerProcess {
    const server = this.all[((i % this.all.length) + this.all.length) % this.all.length]
    if (!server) throw new Error('no server processes')
    return server
  }

  /** The others than `server`. */
  besides(server: ServerProcess): ServerProcess[] {
    return this.all.filter((other) => other !== server)
  }

  /** Starts again the processes that exited (killed or stopped by a test), so that every test finds them all. */
  async restartStopped(): Promise<void> {
    await Promise.all(this.all.filter((server) => !server.alive).map((server) => server.start()))
  }

  /** What each process printed (its tail), for a failed test. */
  report(tail = 20_000): string {
    return this.all.map((server) => `===== ${server.name} (${server.dataDir})\n${server.output().slice(-tail)}`).join('\n')
  }

  /** Kills every process and removes their data directories. */
  async stop(): Promise<void> {
    await Promise.all(this.all.map((server) => server.kill()))
    await Promise.all(this.all.map((server) => fs.rm(server.dataDir, { recursive: true, force: true })))
  }
}

/**
 * Ends the database sessions of a killed process. Postgres notices a dead client only when it next
 * talks to it: a session waiting for a lock would hold its transaction until then (as a lost host's
 * sessions do until TCP keepalive gives up).
 */
export async function endSessionsOf(db: Db, server: ServerProcess): Promise<void> {
  await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ${server.applicationName}`.execute(db)
}

// ---- HTTP as a client on the network sends it (no inject): raw bytes, no automatic decompression.

export interface HttpAnswer {
  status: number
  headers: http.IncomingHttpHeaders
  body: Buffer
  text(): string
  json<T = Record<string, unknown>>(): T
  /** A header's value (the first, when repeated). */
  header(name: string): string | undefined
}

export interface HttpRequest {
  method?: string
  headers?: Record<string, string>
  /** A whole body, or chunks sent as they come (chunked transfer encoding). */
  body?: string | Buffer | AsyncIterable<Buffer | string>
  /** A connection of its own instead of one of the shared keep-alive ones. */
  ownConnection?: boolean
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 64 })

/** One request; rejects when the connection fails before a whole answer arrived. */
export function httpRequest(url: string, { method = 'GET', headers = {}, body, ownConnection = false }: HttpRequest = {}): Promise<HttpAnswer> {
  return new Promise<HttpAnswer>((resolve, reject) => {
    const request = http.request(url, { method, headers, agent: ownConnection ? false : keepAlive }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('error', reject)
      response.on('aborted', () => reject(new Error(`${method} ${url}: the answer was cut off`)))
      response.on('end', () => resolve(answer(response, Buffer.concat(chunks))))
    })
    request.on('error', reject)
    if (body === undefined) request.end()
    else if (typeof body === 'string' || Buffer.isBuffer(body)) request.end(body)
    // The request's own 'error' (or the answer) settles the promise; a body cut off by the server is no second failure.
    else pipeline(Readable.from(body), request).catch(() => {})
  })
}

function answer(response: http.IncomingMessage, body: Buffer): HttpAnswer {
  return {
    status: response.statusCode ?? 0,
    headers: response.headers,
    body,
    text: () => body.toString('utf8'),
    json: <T>() => JSON.parse(body.toString('utf8')) as T,
    header: (name) => {
      const value = response.headers[name.toLowerCase()]
      return Array.isArray(value) ? value[0] : value
    },
  }
}

/** Waits until the next one-second window of the clock has just begun (plus `offsetMs`). */
export async function startOfNextSecond(offsetMs = 20): Promise<void> {
  await sleep(1000 - (Date.now() % 1000) + offsetMs)
}
