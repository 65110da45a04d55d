import { afterAll, describe, expect, it } from 'vitest'
import { createChannel, history } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp, type TestContext } from '../helpers/test-app.js'
import { startReceiver, type Answer, type Receiver } from '../webhooks/receiver.js'

// A push that fails in a way worth retrying (503) is tried again after PUSH_RETRY_BASE_SECONDS,
// then after twice that, 3 tries in all, while the run's push budget lasts. What the test sees is
// what a client sees: the history's `uploaded`, the run's site errors, and the requests the
// destination got; how long the waits take is never measured.
const SETTINGS = { ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0', ALLOW_PRIVATE_DESTINATIONS: 'true' }
const quick = useTestApp({ ...SETTINGS, PUSH_RETRY_BASE_SECONDS: '1' })
// A first wait longer than the run's whole budget: no second try fits in it.
const slow = useTestApp({ ...SETTINGS, PUSH_RETRY_BASE_SECONDS: '600', PUSH_BUDGET_SECONDS: '300' })

const receivers: Receiver[] = []

afterAll(async () => {
  // The apps first: their push workers end what they still send.
  await Promise.all([quick.app.close(), slow.app.close()])
  for (const receiver of receivers) await receiver.close()
})

interface PushedExport {
  f: ImportFixture
  channelId: string
  destination: Receiver
  pid: string
}

/** A run that exported one file to a fresh destination answering `answers`, then `fallback`; its push is under way. */
async function pushedExport(t: TestContext, { answers = [], fallback = 200 }: { answers?: Answer[]; fallback?: Answer }): Promise<PushedExport> {
  const destination = await startReceiver()
  receivers.push(destination)
  destination.answers = answers
  destination.fallback = fallback
  const f = await importFixture(t)
  const stream = await f.createStream()
  await f.attach(stream)
  await f.upload(stream, [{ id: 'A', title: 'Shirt' }])
  const channel = await createChannel(f, { destinations: [{ type: 'http', url: destination.url }] })
  const run = await f.run('all')
  expect(run.status, run.message).toBe('success')
  return { f, channelId: channel.id, destination, pid: run.pid }
}

/** The code and message of each site error of the run, once its push failed. */
async function siteErrorsOnceFailed(f: ImportFixture, pid: string): Promise<string[][]> {
  const errors = await eventually(async () => {
    const found = await f.errors(pid)
    return found.length > 0 && found
  }, 'the failed push')
  return errors.map((e) => [e.error, e.message])
}

describe('a failed push', () => {
  it('is tried again after the configured wait and delivered', async () => {
    const { f, channelId, destination, pid } = await pushedExport(quick, { answers: [503] })
    await eventually(async () => (await history(f, channelId))[0]?.uploaded === '1', 'the push delivered on its second try')
    expect(destination.received).toHaveLength(2)
    expect(destination.received[1]?.body).toContain('Shirt')
    expect(await f.errors(pid)).toEqual([])
  })

  it('fails after its third try when every try fails', async () => {
    const { f, channelId, destination, pid } = await pushedExport(quick, { fallback: 503 })
    expect(await siteErrorsOnceFailed(f, pid)).toEqual([
      ['2003', `Channel ${channelId}: sending ${channelId}.csv to ${destination.url} failed after 3 attempts: HTTP 503 Service Unavailable`],
    ])
    expect(destination.received).toHaveLength(3)
    expect((await history(f, channelId))[0]).toMatchObject({ uploaded: '0' })
  })

  it('is not tried again when the configured wait outlasts the run’s push budget', async () => {
    const { f, channelId, destination, pid } = await pushedExport(slow, { fallback: 503 })
    expect(await siteErrorsOnceFailed(f, pid)).toEqual([
      [
        '2003',
        `Channel ${channelId}: sending ${channelId}.csv to ${destination.url} stopped after 1 attempt: ` +
          `the run's push budget of 300 s ran out (last attempt: HTTP 503 Service Unavailable)`,
      ],
    ])
    expect(destination.received).toHaveLength(1)
  })
})
