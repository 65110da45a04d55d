import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { RunWorker } from '../../src/jobs/run-worker.js'
import { LocalFeedStorage } from '../../src/feeds/local-feed-storage.js'
import { freePort } from '../../src/db/free-port.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { mainArgs } from '../helpers/child-server.js'
import { eventually } from '../helpers/eventually.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'

// A run whose server process is killed mid-run (SIGKILL: no shutdown, no cleanup) is found by
// another process through its stopped heartbeat, retried once, and given up after a second death.
// The test app here only queues (RUN_CONCURRENCY 0); the runs execute in child server processes.

const FAST = { RUN_HEARTBEAT_SECONDS: '0.2', RUN_STALE_SECONDS: '1', RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' }
const t = useTestApp({ ...HIGH_LIMITS, ...FAST, RUN_CONCURRENCY: '0' })
const children = new Set<ChildProcess>()

afterAll(() => {
  for (const child of children) child.kill('SIGKILL')
})

/** A server process on the test database that executes runs. */
async function startWorkerProcess(name: string): Promise<ChildProcess> {
  const port = await freePort()
  const url = new URL(t.database.url)
  url.searchParams.set('application_name', name)
  const child = spawn(process.execPath, mainArgs('serve'), {
    env: { ...process.env, ...FAST, DATABASE_URL: url.toString(), PORT: String(port), LOG_LEVEL: 'silent', RUN_CONCURRENCY: '1' },
    stdio: 'ignore',
  })
  children.add(child)
  child.on('exit', () => children.delete(child))
  await eventually(
    async () => {
      try {
        return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok
      } catch {
        return false // not listening yet
      }
    },
    { what: `worker process ${name} to answer /healthz`, intervalMs: 100, withinMs: 30_000 },
  )
  return child
}

async function kill(child: ChildProcess, name: string): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGKILL')
  await exited
  // Its backends notice the dead socket only when they next write to it; end them now.
  await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ${name}`.execute(t.db)
}

/** Holds the stage table, so that an import blocks in the middle of its run. */
async function holdStage(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: t.database.url })
  await client.connect()
  await client.query('BEGIN')
  await client.query('LOCK TABLE stage_product IN ACCESS EXCLUSIVE MODE')
  return client
}

async function release(client: pg.Client): Promise<void> {
  await client.query('ROLLBACK')
  await client.end()
}

async function siteWithRows(): Promise<ImportFixture> {
  const f = await importFixture(t)
  const stream = await f.createStream()
  await f.attach(stream)
  await f.upload(stream, [
    { id: 'A', title: 'Shirt' },
    { id: 'B', title: 'Shoe' },
  ])
  return f
}

async function startRun(f: ImportFixture): Promise<string> {
  const response = await f.process({ action: 'import' })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ process_id: string }>().process_id
}

async function attemptOf(pid: string): Promise<number> {
  const row = await t.db.selectFrom('run').select('attempt').where('pid', '=', pid).executeTakeFirstOrThrow()
  return row.attempt
}

async function waitForAttempt(pid: string, attempt: number): Promise<void> {
  await eventually(async () => (await attemptOf(pid)) >= attempt, { what: `run ${pid} to reach attempt ${attempt}`, intervalMs: 100, withinMs: 30_000 })
  expect(await attemptOf(pid)).toBe(attempt)
}

function recoveryWorker(): RunWorker {
  return new RunWorker(
    t.db,
    {
      concurrency: 1,
      pollingSeconds: 0.5,
      heartbeatSeconds: 0.2,
      staleSeconds: 1,
      timeoutSeconds: 3600,
      now: () => new Date(),
      feedStorage: new LocalFeedStorage(path.join(t.config.DATA_DIR, 'feeds')),
      limits: { attributesPerStream: t.config.MAX_ATTRIBUTES_PER_STREAM, stageColumns: t.config.MAX_STAGE_COLUMNS, feedMaxBytes: t.config.FEED_MAX_BYTES },
      accountConcurrency: t.config.RUN_ACCOUNT_CONCURRENCY,
    },
    t.app.log,
  )
}

describe('a run whose process is killed', () => {
  it('is retried by another process and succeeds', async () => {
    const f = await siteWithRows()
    const lock = await holdStage()
    let worker: RunWorker | undefined
    try {
      const child = await startWorkerProcess('crash-one')
      const pid = await startRun(f)
      await f.waitFor(pid, ['running'])
      await waitForAttempt(pid, 1)
      await kill(child, 'crash-one')
      await release(lock)
      worker = recoveryWorker()
      worker.start()
      const ended = await f.waitFor(pid)
      expect(ended.status, ended.message).toBe('success')
      expect(await attemptOf(pid)).toBe(2)
      expect((await f.errors(pid)).map((e) => [e.error, e.type])).toEqual([['9001', 'Warning']])
      expect((await f.stage()).rows).toEqual([
        { id: 'A', title: 'Shirt' },
        { id: 'B', title: 'Shoe' },
      ])
      const history = (await f.platform('GET', `/sites/${f.site.id}/importhistory`)).json<{ Importhistory: { pid: string }[] }>()
      expect(history.Importhistory.map((entry) => entry.pid)).toEqual([pid])
      const site = (await f.platform('GET', `/sites/${f.site.id}`)).json<{ Sites: { processing_status: string }[] }>()
      expect(site.Sites[0]?.processing_status).toBe('Done')
    } finally {
      await lock.end().catch(() => {})
      await worker?.stop()
    }
  })

  it('is given up after its second process dies too, with a site error', async () => {
    const f = await siteWithRows()
    const lock = await holdStage()
    let worker: RunWorker | undefined
    try {
      const first = await startWorkerProcess('crash-first')
      const pid = await startRun(f)
      await waitForAttempt(pid, 1)
      const second = await startWorkerProcess('crash-second')
      await kill(first, 'crash-first')
      // The second process finds the stale run, hands it back, and takes the retry.
      await waitForAttempt(pid, 2)
      await kill(second, 'crash-second')
      await release(lock)
      worker = recoveryWorker()
      worker.start()
      const ended = await f.waitFor(pid)
      expect(ended.status).toBe('failed')
      expect(ended.message).toMatch(/given up/)
      const codes = (await f.errors(pid)).map((e) => [e.error, e.type])
      expect(codes).toContainEqual(['9002', 'Error'])
      expect((await f.stage()).rows).toEqual([])
      // The site can run again.
      const again = await f.run()
      expect(again.status).toBe('success')
    } finally {
      await lock.end().catch(() => {})
      await worker?.stop()
    }
  })
})
