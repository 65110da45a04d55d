import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { client, createChannel, history } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'

// Pushes to http destinations run after the run, in slots of their own: a destination that never
// answers holds one push slot of its own account, never a run slot. The receivers listen on
// loopback, which the operator setting allows here.
const t = useTestApp({ ...HIGH_LIMITS, RUN_CONCURRENCY: '2', RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0', ALLOW_PRIVATE_DESTINATIONS: 'true' })

let hanging: Server
let hangingUrl = ''
let hangingRequests = 0
let talkative: Server
let talkativeUrl = ''
let talkativeStatus = 200

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`
}

beforeAll(async () => {
  // Accepts the connection and the body, never answers.
  hanging = createServer((request) => {
    hangingRequests += 1
    request.resume()
  })
  hangingUrl = await listen(hanging)
  // Answers with a reason phrase and a body of its own, which must not reach a site error.
  talkative = createServer((request, response) => {
    request.resume()
    request.on('end', () =>
      response.writeHead(talkativeStatus, 'SECRET-REASON', { 'content-type': 'text/plain' }).end('SECRET-BODY: stack trace of the receiver'),
    )
  })
  talkativeUrl = await listen(talkative)
})

afterAll(async () => {
  // Stop the app first: its push worker aborts the requests the hanging receiver holds.
  await t.app.close()
  for (const server of [hanging, talkative]) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

async function siteWith(f: ImportFixture, rows: object[]): Promise<void> {
  const stream = await f.createStream()
  await f.attach(stream)
  await f.upload(stream, rows)
}

describe('pushes', () => {
  it('report a refused push as a status code only, never the remote reason phrase or body', async () => {
    const f = await importFixture(t)
    await siteWith(f, [{ id: 'A', title: 'Shirt' }])
    const channel = await createChannel(f, { destinations: [{ type: 'http', url: talkativeUrl }] })
    talkativeStatus = 403
    const run = await f.run('all')
    expect(run.status, run.message).toBe('success')
    const errors = await eventually(async () => {
      const found = await f.errors(run.pid)
      return found.length > 0 ? found : undefined
    }, 'the failed push')
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ error: '2003', pid: run.pid })
    expect(errors[0]?.message).toBe(`Channel ${channel.id}: sending ${channel.id}.csv to ${talkativeUrl} failed after 1 attempt: HTTP 403 Forbidden`)
    expect(JSON.stringify(errors)).not.toMatch(/SECRET/)
  })

  it("of a destination that never answers do not delay another account's runs or pushes", async () => {
    const a = await client(t, 'Account A')
    const first = await importFixture(t, {}, a)
    const second = await importFixture(t, {}, a)
    const channels = []
    for (const f of [first, second]) {
      await siteWith(f, [{ id: 'A', title: 'Shirt' }])
      channels.push(
        await createChannel(f, {
          filenames: [
            { type: null, filename: 'full.csv' },
            { type: 'new', filename: 'new.csv' },
          ],
          destinations: [{ type: 'http', url: hangingUrl }],
        }),
      )
    }
    // Two runs of account A, as many as there are run slots; each leaves two pushes to the hanging receiver.
    const started = await Promise.all([first.process({ action: 'all' }), second.process({ action: 'all' })])
    const pids = started.map((response) => response.json<{ process_id: string }>().process_id)
    expect(await first.waitFor(pids[0] ?? '')).toMatchObject({ status: 'success' })
    expect(await second.waitFor(pids[1] ?? '')).toMatchObject({ status: 'success' })
    // One of A's pushes reaches the receiver and waits there: an account has one push in flight.
    await eventually(async () => (hangingRequests > 0 ? true : undefined), 'a push to the hanging receiver')

    const b = await importFixture(t, {}, await client(t, 'Account B'))
    await siteWith(b, [{ id: 'B1', title: 'Sock' }])
    expect(await b.run('import')).toMatchObject({ status: 'success' })
    const bChannel = await createChannel(b, { destinations: [{ type: 'http', url: talkativeUrl }] })
    talkativeStatus = 200
    expect(await b.run('all')).toMatchObject({ status: 'success' })
    await eventually(async () => ((await history(b, bChannel.id))[0]?.uploaded === '1' ? true : undefined), "account B's delivery")

    // Meanwhile account A's pushes are all still pending: nothing delivered, nothing failed, one in flight.
    expect(hangingRequests).toBe(1)
    for (const [i, f] of [first, second].entries()) {
      expect((await history(f, channels[i]?.id ?? ''))[0]).toMatchObject({ process_status: 'success', uploaded: '0' })
      expect(await f.errors(pids[i])).toEqual([])
    }
  })
})
