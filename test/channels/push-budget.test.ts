import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture } from '../helpers/factories.js'
import { createChannel, history } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'

// A run's pushes share one time budget: once it is spent, the pushes still waiting fail with a site
// error that says so, instead of each taking its full timeout and retries.
const t = useTestApp({
  ...HIGH_LIMITS,
  RUN_POLL_SECONDS: '0.5',
  SCHEDULER_INTERVAL_SECONDS: '0',
  ALLOW_PRIVATE_DESTINATIONS: 'true',
  PUSH_BUDGET_SECONDS: '1',
  PUSH_TIMEOUT_SECONDS: '60',
})

let hanging: Server
let url = ''
let requests = 0

beforeAll(async () => {
  hanging = createServer((request) => {
    requests += 1
    request.resume()
  })
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/in`
})

afterAll(async () => {
  await t.app.close()
  hanging.closeAllConnections()
  await new Promise((resolve) => hanging.close(resolve))
})

describe('the push budget of a run', () => {
  it('ends the pushes of a run whose destination never answers', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    await f.upload(stream, [{ id: 'A', title: 'Shirt' }])
    const channel = await createChannel(f, {
      filenames: [
        { type: null, filename: 'full.csv' },
        { type: 'new', filename: 'new.csv' },
      ],
      destinations: [{ type: 'http', url }],
    })
    const run = await f.run('all')
    expect(run.status, run.message).toBe('success')
    const errors = await eventually(async () => {
      const found = await f.errors(run.pid)
      return found.length === 2 ? found : undefined
    }, 'both pushes to end')
    expect(errors.map((e) => [e.error, e.pid])).toEqual([
      ['2003', run.pid],
      ['2003', run.pid],
    ])
    const messages = errors.map((e) => e.message).sort()
    expect(messages[0]).toBe(`Channel ${channel.id}: new.csv was not sent to ${url}: the run's push budget of 1 s ran out`)
    expect(messages[1]).toMatch(
      /^Channel \d+: sending full\.csv to \S+ stopped after 1 attempt: the run's push budget of 1 s ran out \(last attempt: no response within [\d.]+ s\)$/,
    )
    // The first push used the whole budget waiting; the second was never sent.
    expect(requests).toBe(1)
    expect((await history(f, channel.id))[0]).toMatchObject({ process_status: 'success', uploaded: '0' })
  })
})
