import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../src/db/free-port.js'
import { children, exitOf, isAlive, postmasterPid, runCli, start, waitUntilGone, waitUntilHealthy, type Child } from '../helpers/child-server.js'
import { eventually } from '../helpers/eventually.js'

// SIGTERM while an export query runs long: the server ends the query, stops its embedded Postgres
// and exits 0 within SHUTDOWN_GRACE_SECONDS, and hands the interrupted run back for its retry (site
// warning 9001) instead of recording it as failed.

const GRACE_SECONDS = 6
// Generous: the bound is about the grace period, not about this machine's speed.
const EXIT_BOUND_MS = GRACE_SECONDS * 1000 + 20_000
// Each row holds a long value that the channel's filter scans with a LIKE pattern close to the
// filter's length limit: tenths of a second of database time per row, a minute for the export.
const ROWS = 300
const VALUE = 'a'.repeat(100_000)
const FILTER = `v LIKE '%${'a'.repeat(960)}b%'`

describe('shutdown during a long export', { timeout: 240_000 }, () => {
  let dataDir = ''
  let baseUrl = ''
  let env: NodeJS.ProcessEnv = {}
  let server: Child | undefined
  let xAuthToken = ''
  let bearer = ''
  let siteId = ''
  let channelId = ''
  let pid = ''

  const platform = async (method: string, url: string, body?: unknown) => {
    const response = await fetch(`${baseUrl}/platform/v2${url}`, {
      method,
      headers: { 'x-auth-token': xAuthToken, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? null : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    })
    return { status: response.status, json: (await response.json()) as Record<string, unknown> & Record<string, Record<string, unknown>[]> }
  }

  const runStatus = async (runPid: string) => (await platform('GET', `/sites/${siteId}/status/${runPid}`)).json.status as unknown as string

  const waitForStatus = (runPid: string, wanted: string[]): Promise<string> =>
    eventually(
      async () => {
        const status = await runStatus(runPid)
        return wanted.includes(status) ? status : undefined
      },
      { what: `run ${runPid} to reach ${wanted.join('/')}`, intervalMs: 100, withinMs: 120_000 },
    )

  /** Whether the server's export query, with the channel's LIKE filter, is running right now. */
  async function exportQueryRunning(): Promise<boolean> {
    const password = (await fs.readFile(path.join(dataDir, 'pg-password'), 'utf8')).trim()
    const port = Number((await fs.readFile(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[3])
    const client = new pg.Client({ connectionString: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/catalog` })
    await client.connect()
    try {
      const { rows } = await client.query(
        "SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%stage_product%LIKE%' AND pid <> pg_backend_pid()",
      )
      return rows.length > 0
    } finally {
      // Closed before the SIGTERM: a session of another process would rightly keep the cluster running.
      await client.end()
    }
  }

  /** Live processes of the cluster (the postmaster's command line names its data directory). */
  const clusterProcesses = () =>
    execFileSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes(path.join(dataDir, 'pg')) && !line.trimStart().startsWith('Z'))

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'catalog-shutdown-'))
    await fs.chmod(dataDir, 0o755)
    const port = await freePort()
    baseUrl = `http://127.0.0.1:${port}`
    env = {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
      RUN_POLL_SECONDS: '0.5',
    }
    delete env.DATABASE_URL
    delete env.TEST_DATABASE_URL
  })

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL')
    const postmaster = dataDir ? await postmasterPid(dataDir) : undefined
    if (postmaster !== undefined && isAlive(postmaster)) {
      process.kill(postmaster, 'SIGQUIT')
      await waitUntilGone(postmaster, 'the left-over postmaster to stop')
    }
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true })
  })

  it('sets up a site whose channel export runs for a long time', async () => {
    server = start(['serve'], env)
    await waitUntilHealthy(server, baseUrl)
    const account = await runCli(['accounts', 'create', '--name', 'Shutdown', '--json'], { ...env, LOG_LEVEL: 'silent' })
    expect(account.code, account.stderr).toBe(0)
    const created = JSON.parse(account.stdout) as { x_auth_token: string; token: string }
    xAuthToken = created.x_auth_token
    bearer = created.token

    const project = await platform('POST', '/projects', { name: 'Shop' })
    const site = await platform('POST', '/sites', { title: 'Shop DE', project_id: project.json.Projects?.[0]?.id })
    expect(site.status).toBe(201)
    siteId = String(site.json.Sites?.[0]?.id)
    const streamHeaders = { authorization: `Bearer ${bearer}`, 'content-type': 'application/vnd.api+json' }
    const stream = await fetch(`${baseUrl}/streams`, {
      method: 'POST',
      headers: streamHeaders,
      body: JSON.stringify({ data: { type: 'stream', attributes: { name: 'long-values', type: 'chunked' } } }),
    })
    expect(stream.status).toBe(201)
    const streamId = ((await stream.json()) as { data: { id: string } }).data.id
    expect(
      (await platform('POST', `/sites/${siteId}/streams`, { import_type: 1, description: 'feed', stream_id: Number(streamId), status: 'active' })).status,
    ).toBe(201)
    const rows = Array.from({ length: ROWS }, (_, i) => JSON.stringify({ id: String(i), v: VALUE })).join('\n')
    const upload = await fetch(`${baseUrl}/streams/${streamId}/products`, {
      method: 'POST',
      headers: { ...streamHeaders, 'content-type': 'application/x-ndjson' },
      body: rows,
    })
    expect(upload.status, await upload.text()).toBe(202)

    const imported = await platform('POST', `/process/${siteId}`, { action: 'import' })
    expect(await waitForStatus(String(imported.json.process_id), ['success', 'failed'])).toBe('success')
    const channel = await platform('POST', `/sites/${siteId}/channels`, {
      name: 'Slow',
      export_name: 'slow',
      format: 'csv',
      filter: FILTER,
      filenames: [{ type: null, filename: 'slow.csv' }],
    })
    expect(channel.status, JSON.stringify(channel.json)).toBe(201)
    channelId = String(channel.json.Channels?.[0]?.id)
  })

  it('SIGTERM mid-export: exits 0 within the grace period and leaves no Postgres running', async () => {
    const running = server
    if (!running) throw new Error('the server did not start')
    const postmaster = await postmasterPid(dataDir)
    expect(postmaster).toBeDefined()
    const exported = await platform('POST', `/process/${siteId}`, { action: 'channel', id: Number(channelId) })
    expect(exported.status).toBe(200)
    pid = String(exported.json.process_id)
    await eventually(exportQueryRunning, { what: 'the export query to run', intervalMs: 100, withinMs: 60_000 })

    running.process.kill('SIGTERM')
    expect(await exitOf(running, EXIT_BOUND_MS, 'the server after SIGTERM')).toEqual({ code: 0, signal: null })
    expect(await postmasterPid(dataDir)).toBeUndefined()
    expect(clusterProcesses()).toEqual([])
  })

  it('leaves the interrupted run to be retried, not recorded as failed', async () => {
    // A server that runs nothing: it shows the run as the stopped server left it.
    server = start(['serve'], { ...env, RUN_CONCURRENCY: '0' })
    await waitUntilHealthy(server, baseUrl)
    expect(await runStatus(pid)).toBe('running')
    const errors = await platform('GET', `/sites/${siteId}/errors`)
    const ofRun = errors.json.Errors?.filter((error) => error.pid === pid).map((error) => [String(error.error), error.type])
    expect(ofRun).toEqual([['9001', 'Warning']])
    const history = await platform('GET', `/sites/${siteId}/channels/${channelId}/history`)
    expect(history.status).toBe(200)
    expect(history.json.Channels?.[0]?.history).toEqual([])

    server.process.kill('SIGTERM')
    expect(await exitOf(server, EXIT_BOUND_MS, 'the server after SIGTERM')).toEqual({ code: 0, signal: null })
    expect(await postmasterPid(dataDir)).toBeUndefined()
  })

  it('retries the run after a restart, with site error 9001', async () => {
    server = start(['serve'], { ...env, RUN_HEARTBEAT_SECONDS: '0.5', RUN_STALE_SECONDS: '1' })
    await waitUntilHealthy(server, baseUrl)
    // The retry runs the export again.
    await eventually(exportQueryRunning, { what: 'the retried export query to run', intervalMs: 100, withinMs: 60_000 })
    const errors = (await platform('GET', `/sites/${siteId}/errors`)).json.Errors ?? []
    expect(errors.filter((error) => error.pid === pid).map((error) => String(error.error))).toEqual(['9001'])
    expect(await runStatus(pid)).toBe('running')

    // The retry runs the long export again: the shutdown ends it the same way.
    server.process.kill('SIGTERM')
    expect(await exitOf(server, EXIT_BOUND_MS, 'the server after SIGTERM')).toEqual({ code: 0, signal: null })
    expect(clusterProcesses()).toEqual([])
  })
})
