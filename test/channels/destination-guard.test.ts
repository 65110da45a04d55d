import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ResolveHost } from '../../src/net/outbound-guard.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture } from '../helpers/factories.js'
import { createChannel, history } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'

// Outbound safety with the operator setting off (the default): destinations on loopback, private
// networks or metadata services are refused when saved, and again when a push connects, after DNS.

// A resolver the test controls: `feeds.partner.test` answers with a public address until the test
// "rebinds" it to loopback, as a hostile DNS server would between the save and the push.
let rebound = false
const resolveHost: ResolveHost = async (hostname) => {
  if (hostname === 'feeds.partner.test') return [{ address: rebound ? '127.0.0.1' : '93.184.215.14', family: 4 }]
  if (hostname === 'intranet.partner.test')
    return [
      { address: '93.184.215.14', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ]
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
}

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' }, { resolveHost })

// A receiver on loopback that must never be reached.
let receiver: Server
let port = 0
let requests = 0
beforeAll(async () => {
  receiver = createServer((request, response) => {
    requests += 1
    request.resume()
    response.writeHead(200).end('ok')
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  port = (receiver.address() as AddressInfo).port
})
afterAll(async () => {
  receiver.closeAllConnections()
  await new Promise((resolve) => receiver.close(resolve))
})

const ROWS = [{ id: 'A', title: 'Shirt' }]

describe('http destinations with ALLOW_PRIVATE_DESTINATIONS off', () => {
  it.each([
    ['http://127.0.0.1:5432/', /127\.0\.0\.1 is a loopback address/],
    ['http://localhost:8080/in', /localhost is a loopback address/],
    ['http://LOCALHOST./in', /localhost is a loopback address/],
    ['http://[::1]/in', /::1 is a loopback address/],
    ['http://2130706433/in', /127\.0\.0\.1 is a loopback address/],
    ['http://127.1/in', /127\.0\.0\.1 is a loopback address/],
    ['http://0x7f.1/in', /127\.0\.0\.1 is a loopback address/],
    ['http://0177.0.0.1/in', /127\.0\.0\.1 is a loopback address/],
    ['http://[::ffff:127.0.0.1]/in', /loopback address/],
    ['http://[::127.0.0.1]/in', /loopback address/],
    ['http://0.0.0.0/in', /unspecified address/],
    ['http://169.254.169.254/latest/meta-data/', /metadata service/],
    ['http://metadata.google.internal/computeMetadata/v1/', /metadata service/],
    ['http://10.0.0.1/in', /private network/],
    ['http://192.168.1.1/in', /private network/],
    ['http://172.16.0.1/in', /private network/],
    ['http://100.64.0.1/in', /carrier-grade NAT/],
    ['http://169.254.1.1/in', /link-local/],
    ['http://[fe80::1]/in', /link-local/],
    ['http://[fd00::1]/in', /unique-local/],
    ['http://224.0.0.1/in', /multicast/],
    ['http://intranet.partner.test/in', /intranet\.partner\.test resolves to a private network address/],
    ['http://user:secret@feeds.partner.test/in', /credentials/],
    ['http://feeds.partner.test:0/in', /port 0 is not a destination port/],
    ['https://feeds.partner.test:00/in', /port 0 is not a destination port/],
  ])('refuses %s when saved, naming the URL and why', async (url, why) => {
    const f = await importFixture(t)
    const response = await f.platform('POST', `/sites/${f.site.id}/channels`, { name: 'Push', export_name: 'push', destinations: [{ type: 'http', url }] })
    expect(response.statusCode, response.body).toBe(400)
    const { message } = response.json<{ message: string }>()
    expect(message).toMatch(/^destinations\[0\]\.url: /)
    expect(message).toMatch(why)
    if (!url.includes('@')) expect(message).toContain(url)
    expect((await f.platform('GET', `/sites/${f.site.id}/channels`)).json()).toEqual({ success: true, Channels: [] })
  })

  it('refuses a loopback destination on update too, and keeps the channel as it was', async () => {
    const f = await importFixture(t)
    const channel = await createChannel(f, { destinations: [{ type: 'http', url: 'https://feeds.partner.test/in' }] })
    const response = await f.platform('PUT', `/sites/${f.site.id}/channels/${channel.id}`, { destinations: [{ type: 'http', url: 'http://127.1:5432/' }] })
    expect(response.statusCode, response.body).toBe(400)
    expect(response.json()).toEqual({ success: false, message: 'destinations[0].url: http://127.1:5432/ is not allowed: 127.0.0.1 is a loopback address' })
    const stored = await t.db.selectFrom('channel_destination').select('url').where('channel_id', '=', channel.id).execute()
    expect(stored).toEqual([{ url: 'https://feeds.partner.test/in' }])
  })

  it('refuses at connect time a name that resolved to a public address when saved and to loopback when sent', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    await f.upload(stream, ROWS)
    const url = `http://feeds.partner.test:${port}/in`
    const channel = await createChannel(f, { format: 'csv', destinations: [{ type: 'http', url }] })
    rebound = true
    const run = await f.run('all')
    expect(run.status, run.message).toBe('success')
    const [error] = await eventually(async () => {
      const found = await f.errors(run.pid)
      return found.length > 0 ? found : undefined
    }, 'the refused push')
    expect(error).toMatchObject({ error: '2003', pid: run.pid })
    expect(error?.message).toBe(
      `Channel ${channel.id}: sending ${channel.id}.csv to ${url} failed after 1 attempt: refused by the outbound guard: feeds.partner.test ` +
        `resolves to a loopback address`,
    )
    expect(requests).toBe(0)
    expect((await history(f, channel.id))[0]).toMatchObject({ process_status: 'success', uploaded: '0' })
  })
})
