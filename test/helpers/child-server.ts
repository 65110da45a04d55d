import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { eventually } from './eventually.js'

// The server and the CLI as a user runs them, in child processes, and what is left of the embedded
// Postgres after them.

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))

/**
 * The arguments that run the built CLI (`node dist/src/main.js …`, as `npm start` and the package's bin
 * do), which test/global-setup.ts builds before the files that start processes. Through tsx instead,
 * every child spent about 1.5 s more CPU loading its compiler (measured: `accounts list` 0.6 s of CPU
 * built, 2.1 s through tsx), and the CLI tests start over forty of them.
 */
export function mainArgs(...args: string[]): string[] {
  return [path.join(repoRoot, 'dist', 'src', 'main.js'), ...args]
}
const START_TIMEOUT_MS = 90_000
export const STOP_TIMEOUT_MS = 45_000
const CLI_TIMEOUT_MS = 60_000

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

export interface Child {
  process: ChildProcess
  /** stdout and stderr as they arrive. */
  output: () => string
  exited: Promise<Exit>
}

export const children = new Set<ChildProcess>()

export function start(args: string[], env: NodeJS.ProcessEnv, { asTerminalJob = false } = {}): Child {
  const child = asTerminalJob ? terminalJob(args, env) : spawn(process.execPath, mainArgs(...args), { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  let output = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const exited = new Promise<Exit>((resolve) => {
    child.on('close', (code, signal) => {
      children.delete(child)
      resolve({ code, signal })
    })
    child.on('error', (error) => {
      children.delete(child)
      output += `\nspawn failed: ${error.message}`
      resolve({ code: null, signal: null })
    })
  })
  return { process: child, output: () => output, exited }
}

/**
 * The server as a terminal runs `npm start`: a process group of its own, led by a shell that, like
 * npm, forwards SIGINT and SIGTERM to the server. A Ctrl-C (a signal to the whole group) thus
 * reaches the server twice, from the terminal and from its parent, milliseconds apart.
 */
function terminalJob(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const command = [process.execPath, ...mainArgs(...args)].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ')
  const script = `${command} & pid=$!; trap 'kill -INT $pid' INT; trap 'kill -TERM $pid' TERM; wait $pid; wait $pid`
  return spawn('/bin/sh', ['-c', script], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
}

/** Waits for the child to exit on its own; kills it and fails after the bound. */
export async function exitOf(child: Child, boundMs: number, what: string): Promise<Exit> {
  const timeout = sleep(boundMs, 'timeout' as const)
  const outcome = await Promise.race([child.exited, timeout])
  if (outcome === 'timeout') {
    child.process.kill('SIGKILL')
    throw new Error(`${what} did not exit within ${boundMs} ms; output:\n${child.output()}`)
  }
  return outcome
}

export async function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<Exit & { stdout: string; stderr: string }> {
  const child = spawn(process.execPath, mainArgs(...args), { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = new Promise<Exit>((resolve, reject) => {
    child.on('close', (code, signal) => {
      children.delete(child)
      resolve({ code, signal })
    })
    child.on('error', reject)
  })
  const exit = await exitOf({ process: child, output: () => stderr, exited }, CLI_TIMEOUT_MS, `catalog-platform ${args.join(' ')}`)
  return { ...exit, stdout, stderr }
}

/** Polls GET /healthz until 200; fails if the server exits first or the bound passes. */
export async function waitUntilHealthy(server: Child, baseUrl: string): Promise<void> {
  let exited = false
  void server.exited.then(() => (exited = true))
  await eventually(
    async () => {
      if (exited) throw new Error(`the server exited during start-up; output:\n${server.output()}`)
      try {
        return (await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2_000) })).status === 200
      } catch {
        return false // not listening yet
      }
    },
    { what: 'the server to answer GET /healthz with 200', intervalMs: 250, withinMs: START_TIMEOUT_MS, detail: () => `output:\n${server.output()}` },
  )
}

/** Waits until the process `pid` is gone (it exits, or the cluster stops after a signal). */
export async function waitUntilGone(pid: number, what: string): Promise<void> {
  await eventually(async () => !isAlive(pid), { what, intervalMs: 100, withinMs: STOP_TIMEOUT_MS })
}

/** The embedded cluster's postmaster pid, from the lock file Postgres keeps in its data directory. */
export async function postmasterPid(dataDir: string): Promise<number | undefined> {
  const lockFile = path.join(dataDir, 'pg', 'postmaster.pid')
  if (!existsSync(lockFile)) return undefined
  const pid = Number((await fs.readFile(lockFile, 'utf8')).split('\n')[0])
  return Number.isInteger(pid) && pid > 0 ? pid : undefined
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
