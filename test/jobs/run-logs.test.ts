import { afterAll, describe, expect, it } from 'vitest'
import { createChannel } from '../helpers/clients.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { captureLog, LEVEL, type LogLine } from '../helpers/log-capture.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { startReceiver, type Receiver } from '../webhooks/receiver.js'

// What an operator reads about runs at the default level (info): a line when a run starts, one when
// it ends (warn when it failed) with its counts and site error codes, one per batch its import
// processed, and a warning for every failed delivery of what it produced (webhook events, feed
// pushes): each line names the run in the field `pid`, so that `grep <pid>` finds all of them.
// Receivers on 127.0.0.1 answer 500; retries wait long enough that one failed attempt is all a test sees.
const log = captureLog('info')
const t = useTestApp(
  {
    ...HIGH_LIMITS,
    RUN_POLL_SECONDS: '0.5',
    SCHEDULER_INTERVAL_SECONDS: '0',
    ALLOW_PRIVATE_DESTINATIONS: 'true',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_POLL_SECONDS: '0.2',
    WEBHOOK_RETRY_BASE_SECONDS: '600',
  },
  { logger: log.options },
)

const receivers: Receiver[] = []
async function failingReceiver(): Promise<Receiver> {
  const receiver = await startReceiver()
  receiver.fallback = 500
  receivers.push(receiver)
  return receiver
}

afterAll(async () => {
  // The app first: its workers stop sending to the receivers.
  await t.app.close()
  for (const receiver of receivers) await receiver.close()
})

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

function endOf(pid: string): Promise<LogLine> {
  return log.line(`the end line of run ${pid}`, (line) => line.msg === 'run ended' && line.pid === pid)
}

/**
 * What `grep <pid>` finds, besides the request lines of the status polls that name the run in
 * their URL: each as written and as read.
 */
function grep(pid: string): { raw: string; line: LogLine }[] {
  return log.raw.map((raw, i) => ({ raw, line: log.lines[i] as LogLine })).filter(({ raw, line }) => raw.includes(pid) && line.reqId === undefined)
}

const messagesOf = (pid: string) => grep(pid).map(({ line }) => line.msg)

/** Each line grep finds names the run in `pid`, once (pino's own process id is `processId`). */
function expectEveryLineNamesTheRun(pid: string): void {
  for (const { raw, line } of grep(pid)) {
    expect(line.pid, raw).toBe(pid)
    expect(raw.match(/"pid":/g), raw).toHaveLength(1)
  }
}

async function siteWithRows(f: ImportFixture, rows: object[]): Promise<{ stream: string; batch: string }> {
  const stream = await f.createStream()
  await f.attach(stream)
  const upload = await f.upload(stream, rows)
  expect(upload.statusCode, upload.body).toBe(202)
  return { stream, batch: upload.json<{ data: { id: string } }>().data.id }
}

describe('the run log', () => {
  it('logs a successful import: its start, each batch it processed and its end with the product count, at info', async () => {
    const f = await importFixture(t)
    const { stream, batch } = await siteWithRows(f, [
      { id: 'A', title: 'Shirt' },
      { id: 'B', title: 'Socks' },
    ])
    const run = await f.run('import')
    expect(run.status, run.message).toBe('success')
    const who = { pid: run.pid, account: f.account.accountId, site: f.site.id }

    const end = await endOf(run.pid)
    expect(end).toMatchObject({ level: LEVEL.info, ...who, action: 'import', attempt: 1, result: 'success', products: 2, errorCodes: [] })
    expect(end).toMatchObject({ message: run.message, durationMs: expect.any(Number), processId: process.pid })
    const start = log.lines.find((line) => line.msg === 'run started' && line.pid === run.pid)
    expect(start).toMatchObject({ level: LEVEL.info, ...who, action: 'import', attempt: 1, trigger: 'api' })
    const processed = log.lines.find((line) => line.msg === 'batch processed' && line.batch === batch)
    expect(processed).toMatchObject({ level: LEVEL.info, ...who, stream, kind: 'upsert', status: 'processed', successCount: 2, errorCount: 0 })

    expect(messagesOf(run.pid)).toEqual(['run started', 'batch processed', 'run ended'])
    expectEveryLineNamesTheRun(run.pid)
  })

  it('logs the end of a failed import at warn, with its message and site error code 1001, and the failed delivery of its event', async () => {
    const f = await importFixture(t)
    const receiver = await failingReceiver()
    const subscribed = await f.c.post('/webhooks', { url: receiver.url, events: ['run.failed'] })
    expect(subscribed.statusCode, subscribed.body).toBe(201)
    const webhook = subscribed.json<{ Webhooks: { id: string }[] }>().Webhooks[0]?.id
    // Its main source's stream has no products: the import fails.
    await f.attach(await f.createStream())
    const run = await f.run('import')
    expect(run.status).toBe('failed')
    const who = { pid: run.pid, account: f.account.accountId, site: f.site.id }

    const end = await endOf(run.pid)
    expect(end).toMatchObject({ level: LEVEL.warn, ...who, action: 'import', attempt: 1, result: 'failed', errorCodes: [1001], message: run.message })
    expect(end.message).toMatch(/has no products/)
    expect(end.durationMs).toEqual(expect.any(Number))

    // The run.failed event, refused by its receiver: a warning that says what the receiver answered and what comes next.
    const attempt = await log.line('the failed delivery attempt', (line) => line.msg === 'webhook delivery attempt failed' && line.webhook === webhook)
    expect(attempt).toMatchObject({
      level: LEVEL.warn,
      account: f.account.accountId,
      webhook,
      delivery: expect.any(String),
      eventType: 'run.failed',
      pid: run.pid,
      attempt: 1,
      statusCode: 500,
      error: 'HTTP 500 Internal Server Error',
      result: 'retrying',
      nextAttemptAt: expect.stringMatching(ISO_TIME),
    })
    // The delivery may fail before the run's end line is written: the order of the two is not the point.
    expect(messagesOf(run.pid).sort()).toEqual(['run ended', 'run started', 'webhook delivery attempt failed'])
    expectEveryLineNamesTheRun(run.pid)
  })

  it('logs the end of an export with each channel it wrote and its counts, and every failed push of its files at warn', async () => {
    const f = await importFixture(t)
    const receiver = await failingReceiver()
    await siteWithRows(f, [
      { id: 'A', title: 'Shirt' },
      { id: 'B', title: 'Socks' },
    ])
    const channel = await createChannel(f, { destinations: [{ type: 'http', url: receiver.url }] })
    const run = await f.run('all')
    expect(run.status, run.message).toBe('success')
    const who = { pid: run.pid, account: f.account.accountId, site: f.site.id }

    const end = await endOf(run.pid)
    expect(end).toMatchObject({ level: LEVEL.info, ...who, action: 'all', result: 'success', products: 2, errorCodes: expect.any(Array) })
    expect(end.channels).toEqual([{ channel: channel.id, new: 2, modified: 0, deleted: 0, unchanged: 0 }])

    const push = await log.line('the failed push', (line) => line.msg === 'feed push attempt failed' && line.pid === run.pid)
    expect(push).toMatchObject({
      level: LEVEL.warn,
      ...who,
      channel: channel.id,
      push: expect.any(String),
      filename: expect.any(String),
      host: new URL(receiver.url).host,
      attempt: 1,
      error: 'HTTP 500 Internal Server Error',
      result: 'retrying',
      nextAttemptAt: expect.stringMatching(ISO_TIME),
    })
    expectEveryLineNamesTheRun(run.pid)
  })
})
