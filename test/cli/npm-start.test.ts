import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort } from '../../src/db/free-port.js'
import { STOP_TIMEOUT_MS, children, exitOf, isAlive, postmasterPid, waitUntilGone, waitUntilHealthy, type Child, type Exit } from '../helpers/child-server.js'

// `npm start` as the README's quick start runs it: a SIGTERM to npm (what a process manager or a
// terminal's kill sends) reaches the server, which drains, stops its embedded Postgres and exits,
// leaving no process behind (issue 21, finding 5).

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
let dataDir = ''

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL')
  const pid = dataDir ? await postmasterPid(dataDir) : undefined
  if (pid !== undefined && isAlive(pid)) process.kill(pid, 'SIGQUIT')
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true })
})

/** The pids of `pid`'s children, from /proc. */
async function childPids(pid: number): Promise<number[]> {
  const tasks = await fs.readdir(`/proc/${pid}/task`)
  const lists = await Promise.all(tasks.map((task) => fs.readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '')))
  return lists.flatMap((list) => list.trim().split(/\s+/).filter(Boolean).map(Number))
}

describe('npm start', { timeout: 240_000 }, () => {
  it('stops on SIGTERM to npm: the server drains and stops its embedded Postgres, nothing is left', async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'catalog-npm-start-'))
    await fs.chmod(dataDir, 0o755)
    const port = await freePort()
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' }
    delete env.DATABASE_URL
    delete env.TEST_DATABASE_URL
    const npm = spawn('npm', ['start'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
    children.add(npm)
    let output = ''
    npm.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    npm.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    const exited = new Promise<Exit>((resolve) => npm.on('close', (code, signal) => resolve({ code, signal })))
    const child: Child = { process: npm, output: () => output, exited }

    await waitUntilHealthy(child, `http://127.0.0.1:${port}`)
    const server = await childPids(npm.pid!)
    const postmaster = await postmasterPid(dataDir)
    expect(server.length).toBeGreaterThan(0)
    expect(postmaster).toBeDefined()

    npm.kill('SIGTERM')
    const exit = await exitOf(child, STOP_TIMEOUT_MS, 'npm start')
    expect(exit, output).toEqual({ code: 0, signal: null })
    for (const pid of [...server, postmaster!]) await waitUntilGone(pid, `process ${pid} to end; output:\n${output}`)
    expect(output).toMatch(/stopp|clos|shut/i)
  })
})
