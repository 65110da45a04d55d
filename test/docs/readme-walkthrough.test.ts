import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../src/db/free-port.js'
import { STOP_TIMEOUT_MS, exitOf, start, waitUntilHealthy, type Child } from '../helpers/child-server.js'
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js'
import {
  commandResults,
  matchesShown,
  splitCommands,
  walkthroughCommands,
  walkthroughScript,
  type CommandResult,
  type WalkCommand,
} from './shell-walkthrough.js'

// The README's quick-start walkthrough, run as written: its ```sh walkthrough blocks, in one bash,
// against the server started as a user starts it (src/main.ts serve, here on a database of its own),
// with the account created by the README's own command. Every command must exit 0, every curl must
// answer the status its comment shows and print what the comment shows.

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const README_ADDRESS = 'http://127.0.0.1:8080'
/** The whole walkthrough, the runs it waits for included (each bounded by the README's own loop). */
const SCRIPT_TIMEOUT_MS = 240_000

describe('splitting shell text into commands', () => {
  const split = (text: string) => splitCommands(text.split('\n').map((line, i) => ({ text: line, line: i + 1 })))

  it('keeps continuation lines, multi-line quotes and $( … ) in one command, with the comments under it', () => {
    const commands = split(
      [
        `X=$(curl -s "$B/a" \\`,
        `  -d '{"a":1,`,
        `  "b":"# not a comment"}' | pick 'r.a')   # trailing`,
        '# 201 {"a":1,',
        '#   "b":"x"}',
        '# an explanation',
        '',
        '# before the next command',
        `f() { for i in $(seq 3); do echo "$(date)"; done; }`,
      ].join('\n'),
    )
    expect(commands).toHaveLength(2)
    expect(commands[0]).toMatchObject({ line: 1, status: 201, shown: '{"a":1,"b":"x"}' })
    expect(commands[0]?.text.split('\n')).toHaveLength(3)
    expect(commands[1]).toMatchObject({ line: 9, comments: [], shown: '' })
    expect(commands[1]?.status).toBeUndefined()
  })

  it('compares outputs with … standing for anything and whitespace ignored', () => {
    expect(matchesShown('{"id":"7","at":"2026-11-25 19:00:00"}\n', '{"id":"7","at":"…"}')).toBe(true)
    expect(matchesShown('{"id":"8"}', '{"id":"7"}')).toBe(false)
    expect(matchesShown('id,title\nSKU1,Shirt\n', 'id,title SKU1,Shirt')).toBe(true)
    expect(matchesShown('{"a":1,"b":2}', '{"a":1,…,"c":3}')).toBe(false)
  })
})

describe('the README walkthrough', { timeout: SCRIPT_TIMEOUT_MS + 120_000 }, () => {
  let commands: WalkCommand[] = []
  let results: CommandResult[] = []
  let database: TestDatabase | undefined
  let server: Child | undefined
  let workDir = ''
  let baseUrl = ''

  beforeAll(async () => {
    commands = walkthroughCommands(await fs.readFile(path.join(repoRoot, 'README.md'), 'utf8'))
    database = await createTestDatabase()
    const port = await freePort()
    baseUrl = `http://127.0.0.1:${port}`
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' }
    // No schedule may queue a run of the walkthrough's site while it runs its own.
    env.SCHEDULER_INTERVAL_SECONDS = '0'
    delete env.TEST_DATABASE_URL
    server = start(['serve'], env)
    await waitUntilHealthy(server, baseUrl)
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'catalog-walkthrough-'))
  }, 150_000)

  afterAll(async () => {
    if (server) {
      server.process.kill('SIGTERM')
      await exitOf(server, STOP_TIMEOUT_MS, 'the server after SIGTERM').catch(() => undefined)
    }
    await database?.drop()
    if (workDir) await fs.rm(workDir, { recursive: true, force: true })
  }, STOP_TIMEOUT_MS + 30_000)

  it('is marked in the README, and every curl in it shows the status it answers', () => {
    expect(commands.length).toBeGreaterThan(30)
    const undocumented = commands.filter((c) => /\bcurl\s/.test(c.text) && !/^\s*\w+\s*\(\)\s*\{/.test(c.text) && c.status === undefined)
    expect(undocumented.map((c) => `README line ${c.line}: ${c.text}`)).toEqual([])
    expect(commands.some((c) => c.text.includes('npx catalog-platform accounts create'))).toBe(true)
  })

  it('runs top to bottom in one shell: every command exits 0, every curl answers and prints what the README shows', async () => {
    const log = path.join(workDir, 'walkthrough.log')
    const script = path.join(workDir, 'walkthrough.sh')
    await fs.writeFile(log, '')
    // The README's commands and outputs name the server at its default address; this one has a port of its own.
    const here = (text: string) => text.replaceAll(README_ADDRESS, baseUrl)
    await fs.writeFile(script, walkthroughScript(commands, repoRoot, here))
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database!.url, LOG_LEVEL: 'silent', WALK_LOG: log }
    for (const name of ['TEST_DATABASE_URL', 'B', 'XAUTH', 'TOKEN']) delete env[name]
    const output = await runBash(script, workDir, env)
    results = commandResults(commands, output, await fs.readFile(log, 'utf8'))

    const problems: string[] = []
    commands.forEach((command, i) => {
      const result = results[i]!
      const where = `README line ${command.line} (${command.text.split('\n')[0]?.slice(0, 100)})`
      if (result.exitStatus !== 0) problems.push(`${where}: exit status ${result.exitStatus}; output: ${result.output}`)
      const expected = command.status
      const wrong = result.curlStatuses.filter((status) => (expected === undefined ? status < 200 || status > 299 : status !== expected))
      if (expected !== undefined && result.curlStatuses.length === 0) problems.push(`${where}: called no curl, the README shows ${expected}`)
      if (wrong.length > 0)
        problems.push(`${where}: curl answered ${result.curlStatuses.join(', ')}, the README shows ${expected ?? '2xx'}; output: ${result.output}`)
      if (command.shown !== '' && !matchesShown(result.output, here(command.shown))) {
        problems.push(`${where}: printed\n  ${result.output.trim()}\nthe README shows\n  ${command.shown}`)
      }
    })
    expect(problems, `\n${problems.join('\n\n')}`).toEqual([])
  })

  it('imports the uploaded products, and the feed the channel names holds them', () => {
    expect(results.length, 'the walkthrough did not run').toBe(commands.length)
    const outputOf = (pattern: RegExp) => commands.filter((c) => pattern.test(c.text)).map((c) => results[c.index]!.output)
    const statuses = outputOf(/\/status\/\$PID/)
    expect(statuses[0]).toMatch(/"status":"success","message":"Imported 3 products"/)
    expect(statuses[1]).toMatch(/"status":"success"/)
    const [feed] = outputOf(/^curl -s "\$FEED"\s*(#.*)?$/)
    for (const id of ['SKU1', 'SKU2', 'SKU3']) expect(feed).toContain(`${id},`)
  })
})

/** Runs the script with bash, bounded: past the bound its whole process group is killed. */
function runBash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const bash = spawn('bash', [script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    let output = ''
    bash.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    bash.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    const timer = setTimeout(() => {
      process.kill(-bash.pid!, 'SIGKILL')
      reject(new Error(`the walkthrough did not finish within ${SCRIPT_TIMEOUT_MS} ms; output:\n${output}`))
    }, SCRIPT_TIMEOUT_MS)
    bash.on('error', reject)
    bash.on('close', () => {
      clearTimeout(timer)
      resolve(output)
    })
  })
}
