import fs from 'node:fs/promises'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { eventually } from '../helpers/eventually.js'
import { loadConfig } from '../../src/config.js'
import { createDb } from '../../src/db/database.js'
import { freePort } from '../../src/db/free-port.js'
import {
  STOP_TIMEOUT_MS,
  children,
  exitOf,
  isAlive,
  postmasterPid,
  runCli,
  start,
  waitUntilGone,
  waitUntilHealthy,
  type Child,
} from '../helpers/child-server.js'

// The server as a user runs it: no DATABASE_URL, so the embedded Postgres keeps its data in
// DATA_DIR; the CLI beside it on the same DATA_DIR; a restart that finds the data again.

describe('server lifecycle with the embedded Postgres', { timeout: 180_000 }, () => {
  let dataDir = ''
  let baseUrl = ''
  let env: NodeJS.ProcessEnv = {}
  let server: Child | undefined
  let xAuthToken = ''
  let projectId = ''
  let siteId = ''
  let postmaster: number | undefined

  const platform = (method: string, url: string, body?: unknown) =>
    fetch(`${baseUrl}${url}`, {
      method,
      headers: { 'x-auth-token': xAuthToken, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? null : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    })

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'catalog-lifecycle-'))
    // When we are root, Postgres runs as the `postgres` user, which must be able to enter the directory.
    await fs.chmod(dataDir, 0o755)
    const port = await freePort()
    baseUrl = `http://127.0.0.1:${port}`
    env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' }
    delete env.DATABASE_URL
    delete env.TEST_DATABASE_URL
  })

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL')
    // A server killed above cannot stop its Postgres: stop that one (and only that one) by its pid.
    const pid = dataDir ? await postmasterPid(dataDir) : undefined
    if (pid !== undefined && isAlive(pid)) {
      process.kill(pid, 'SIGQUIT')
      await waitUntilGone(pid, 'the left-over postmaster to stop')
    }
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true })
  })

  it('starts on an empty DATA_DIR and logs where the data lives', async () => {
    server = start(['serve'], env)
    await waitUntilHealthy(server, baseUrl)
    const lines = server.output().split('\n')
    expect(lines.filter((line) => line.includes(dataDir) && line.includes('DATABASE_URL'))).toHaveLength(1)
    postmaster = await postmasterPid(dataDir)
    expect(postmaster).toBeDefined()
  })

  it('runs the CLI against the running server’s database', async () => {
    const result = await runCli(['accounts', 'create', '--name', 'Lifecycle', '--json'], { ...env, LOG_LEVEL: 'silent' })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(1)
    xAuthToken = (JSON.parse(result.stdout) as { x_auth_token: string }).x_auth_token

    // The CLI attached to the server's cluster and left it running when it finished.
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200)
    expect(await postmasterPid(dataDir)).toBe(postmaster)
  })

  it('creates a project and a site over HTTP', async () => {
    const project = await platform('POST', '/platform/v2/projects', { name: 'Webshop' })
    expect(project.status).toBe(201)
    projectId = ((await project.json()) as { Projects: { id: string }[] }).Projects[0]?.id ?? ''
    expect(projectId).toMatch(/^\d+$/)

    const site = await platform('POST', '/platform/v2/sites', { title: 'Webshop DE', project_id: projectId })
    expect(site.status).toBe(201)
    siteId = ((await site.json()) as { Sites: { id: string }[] }).Sites[0]?.id ?? ''
    expect(siteId).toMatch(/^\d+$/)
  })

  it('SIGTERM: exits 0 and stops the embedded Postgres', async () => {
    const running = server
    if (!running) throw new Error('the server did not start')
    running.process.kill('SIGTERM')
    expect(await exitOf(running, STOP_TIMEOUT_MS, 'the server after SIGTERM')).toEqual({ code: 0, signal: null })
    // Postgres removes its lock file once it has shut down (what `pg_ctl stop -w` waits for).
    expect(await postmasterPid(dataDir)).toBeUndefined()
  })

  it('runs the CLI while no server is running', async () => {
    const result = await runCli(['accounts', 'list', '--json'], { ...env, LOG_LEVEL: 'silent' })
    expect(result.code, result.stderr).toBe(0)
    expect((JSON.parse(result.stdout) as { name: string }[]).map((a) => a.name)).toEqual(['Lifecycle'])
    // It started a cluster for itself and stopped it again.
    expect(await postmasterPid(dataDir)).toBeUndefined()
  })

  it('finds the project and the site again after a restart; SIGINT exits 0', async () => {
    server = start(['serve'], env)
    await waitUntilHealthy(server, baseUrl)

    const project = await platform('GET', `/platform/v2/projects/${projectId}`)
    expect(project.status).toBe(200)
    expect(await project.json()).toMatchObject({ success: true, Projects: [{ id: projectId, name: 'Webshop' }] })
    const site = await platform('GET', `/platform/v2/sites/${siteId}`)
    expect(site.status).toBe(200)
    expect(await site.json()).toMatchObject({ success: true, Sites: [{ id: siteId, title: 'Webshop DE', project_id: projectId }] })

    server.process.kill('SIGINT')
    expect(await exitOf(server, STOP_TIMEOUT_MS, 'the server after SIGINT')).toEqual({ code: 0, signal: null })
    expect(await postmasterPid(dataDir)).toBeUndefined()
  })

  it('Ctrl-C in a terminal (SIGINT to the process group, forwarded again by the parent) stops the embedded Postgres too', async () => {
    const job = start(['serve'], env, { asTerminalJob: true })
    await waitUntilHealthy(job, baseUrl)
    expect(await postmasterPid(dataDir)).toBeDefined()
    // An upload whose body never ends keeps the drain waiting, so that every signal below reaches a server still shutting down.
    const hanging = http.request(`${baseUrl}/streams/1/products`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' } })
    hanging.on('error', () => {})
    // Refused at once (no credential), its body is still read, and the connection kept, while it comes.
    const answered = new Promise<void>((resolve) => hanging.on('response', (response) => (response.resume(), resolve())))
    hanging.write('{"id":"still coming')
    await answered
    const group = -job.process.pid!
    process.kill(group, 'SIGINT')
    await eventually(async () => job.output().includes('SIGINT received') || undefined, 'the first Ctrl-C to be heard')
    // The same Ctrl-C as a parent forwards it (npm does), at once: the shutdown goes on as it was.
    process.kill(group, 'SIGINT')
    await eventually(async () => job.output().includes('SIGINT again at once') || undefined, 'the forwarded signal to be heard')
    // A second Ctrl-C a second later: what is under way is ended now, and the database still stopped.
    await new Promise((resolve) => setTimeout(resolve, 1100))
    process.kill(group, 'SIGINT')
    // The job's exit status is its shell's (a wait a trapped signal interrupts answers 130): the server's own end is its last line.
    await exitOf(job, STOP_TIMEOUT_MS, 'the terminal job after Ctrl-C')
    hanging.destroy()
    expect(job.output()).toContain('SIGINT again: ending what is under way now, then stopping the database')
    expect(job.output()).toContain('shut down: requests drained, runs ended, the database closed')
    expect(await postmasterPid(dataDir)).toBeUndefined()
  })
})

describe('GET /healthz', () => {
  it('answers 503 when the database is unreachable', async () => {
    const db = createDb('postgres://u:p@127.0.0.1:1/x', 1)
    const app = await buildApp({ db, config: loadConfig({ LOG_LEVEL: 'silent' }), logger: false })
    try {
      const response = await app.inject({ method: 'GET', url: '/healthz' })
      expect(response.statusCode).toBe(503)
      expect(response.json()).toMatchObject({ status: 'unavailable', database: 'down' })
    } finally {
      await app.close()
      await db.destroy()
    }
  })
})
