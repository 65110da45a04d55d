import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ResolveHost } from '../../src/net/outbound-guard.js'
import { createChannel, history } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'
import { importFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp, type TestContext } from '../helpers/test-app.js'
import { startReceiver, type Receiver } from '../webhooks/receiver.js'

// What the outbound guard refuses whatever the operator allows: every cloud metadata and credential
// endpoint, in any spelling, and names that do not resolve when saved. Both ways a tenant gives the
// service a URL to call (a channel's http destination and a webhook), through HTTP, with the
// operator setting off and on. Names resolve through a stand-in DNS that records what it was asked.

const asked: string[] = []
const resolveHost: ResolveHost = async (hostname) => {
  asked.push(hostname)
  if (hostname === 'feeds.partner.test') return [{ address: '127.0.0.1', family: 4 }]
  if (hostname === 'hooks.partner.test') return [{ address: '93.184.215.14', family: 4 }]
  if (hostname === 'creds.partner.test') return [{ address: '169.254.170.23', family: 4 }]
  if (hostname === 'creds6.partner.test') return [{ address: 'fd00:ec2::23', family: 6 }]
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
}

const SETTINGS = { ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_CONCURRENCY: '0' }
const modes: [string, TestContext][] = [
  ['off', useTestApp(SETTINGS, { resolveHost })],
  ['on', useTestApp({ ...SETTINGS, ALLOW_PRIVATE_DESTINATIONS: 'true' }, { resolveHost })],
]

const METADATA = 'a cloud metadata service address'
// Each endpoint, and why it is refused: the host as the guard names it.
const ENDPOINTS: [string, string][] = [
  // EKS Pod Identity, the finding's two.
  ['http://169.254.170.23/v1/credentials', `169.254.170.23 is ${METADATA}`],
  ['http://[fd00:ec2::23]/v1/credentials', `fd00:ec2::23 is ${METADATA}`],
  // ... in other spellings.
  ['http://[FD00:EC2:0:0::23]:80/v1/credentials', `fd00:ec2::23 is ${METADATA}`],
  ['http://[::ffff:169.254.170.23]/v1/credentials', `::ffff:a9fe:aa17 is ${METADATA}`],
  ['http://[::ffff:a9fe:aa17]/v1/credentials', `::ffff:a9fe:aa17 is ${METADATA}`],
  ['http://[64:ff9b::a9fe:aa17]/v1/credentials', `64:ff9b::a9fe:aa17 is ${METADATA}`],
  ['http://2852039191/v1/credentials', `169.254.170.23 is ${METADATA}`],
  ['http://0xa9.0xfe.0xaa.0x17/v1/credentials', `169.254.170.23 is ${METADATA}`],
  ['http://169.254.170.23./v1/credentials', `169.254.170.23 is ${METADATA}`],
  // The other metadata and credential endpoints of the list.
  ['http://169.254.169.254/latest/meta-data/', `169.254.169.254 is ${METADATA}`],
  ['http://[fd00:ec2::254]/latest/meta-data/', `fd00:ec2::254 is ${METADATA}`],
  ['http://169.254.170.2/v2/credentials', `169.254.170.2 is ${METADATA}`],
  ['http://[fd20:ce::254]/computeMetadata/v1/', `fd20:ce::254 is ${METADATA}`],
  ['http://168.63.129.16/machine', `168.63.129.16 is ${METADATA}`],
  ['http://100.100.100.200/latest/meta-data/', `100.100.100.200 is ${METADATA}`],
  ['http://[fd00:100::100:200]/latest/meta-data/', `fd00:100::100:200 is ${METADATA}`],
  ['http://192.0.0.192/latest/', `192.0.0.192 is ${METADATA}`],
  ['http://[fd00:c1::a9fe:a9fe]/opc/v2/instance/', `fd00:c1::a9fe:a9fe is ${METADATA}`],
  ['http://[fe80::a9fe:a9fe]/openstack/', `fe80::a9fe:a9fe is ${METADATA}`],
  ['http://169.254.0.23/meta-data/', `169.254.0.23 is ${METADATA}`],
  ['http://169.254.42.42/conf', `169.254.42.42 is ${METADATA}`],
  ['http://[fd00:42::42]/conf', `fd00:42::42 is ${METADATA}`],
  ['http://metadata.google.internal/computeMetadata/v1/', `metadata.google.internal is ${METADATA}`],
  ['http://METADATA.Google.Internal./computeMetadata/v1/', `metadata.google.internal is ${METADATA}`],
  ['http://metadata.goog/computeMetadata/v1/', `metadata.goog is ${METADATA}`],
  ['http://metadata/computeMetadata/v1/', `metadata is ${METADATA}`],
  ['http://instance-data.ec2.internal/latest/', `instance-data.ec2.internal is ${METADATA}`],
  ['http://metadata.tencentyun.com/latest/', `metadata.tencentyun.com is ${METADATA}`],
  // Names that resolve to a credential endpoint.
  ['http://creds.partner.test/v1/credentials', `creds.partner.test resolves to ${METADATA}`],
  ['http://Creds6.Partner.Test./v1/credentials', `creds6.partner.test resolves to ${METADATA}`],
  // Names that do not resolve, whatever their spelling.
  ['https://vm./', 'vm does not resolve to any address'],
  ['https://vm/', 'vm does not resolve to any address'],
  ['https://VM./feed', 'vm does not resolve to any address'],
  ['https://nowhere.partner.test./in', 'nowhere.partner.test does not resolve to any address'],
]

describe.each(modes)('with ALLOW_PRIVATE_DESTINATIONS %s', (_mode, t) => {
  it.each(ENDPOINTS)('a channel http destination %s is refused with a 400 naming it and why', async (url, why) => {
    const f = await importFixture(t)
    const response = await f.platform('POST', `/sites/${f.site.id}/channels`, { name: 'Push', export_name: 'push', destinations: [{ type: 'http', url }] })
    expect(response.statusCode, response.body).toBe(400)
    expect(response.json()).toEqual({ success: false, message: `destinations[0].url: ${url} is not allowed: ${why}` })
    expect((await f.platform('GET', `/sites/${f.site.id}/channels`)).json()).toEqual({ success: true, Channels: [] })
  })

  it.each(ENDPOINTS)('a webhook URL %s is refused with a 400 naming it and why', async (url, why) => {
    const f = await importFixture(t)
    const response = await f.platform('POST', '/webhooks', { url })
    expect(response.statusCode, response.body).toBe(400)
    expect(response.json()).toEqual({ success: false, message: `url: ${url} is not allowed: ${why}` })
    expect((await f.platform('GET', '/webhooks')).json()).toMatchObject({ Webhooks: [] })
  })

  it('asks DNS for a name in one spelling, lower case without the trailing dot, and saves it as given', async () => {
    const f = await importFixture(t)
    asked.length = 0
    const url = 'https://Hooks.Partner.Test./catalog'
    const webhook = await f.platform('POST', '/webhooks', { url })
    expect(webhook.statusCode, webhook.body).toBe(201)
    expect(asked).toEqual(['hooks.partner.test'])
    const refused = await f.platform('POST', '/webhooks', { url: 'https://VM./' })
    expect(refused.statusCode).toBe(400)
    expect(asked).toEqual(['hooks.partner.test', 'vm'])
  })
})

describe('a push to a name spelled with capitals and a trailing dot', () => {
  const [, on] = modes[1] ?? ['', undefined as unknown as TestContext]
  let receiver: Receiver
  beforeAll(async () => {
    receiver = await startReceiver()
  })
  afterAll(async () => {
    await on.app.close()
    await receiver.close()
  })

  it('resolves the same name at connect time as at save, and arrives', async () => {
    const f = await importFixture(on)
    const stream = await f.createStream()
    await f.attach(stream)
    await f.upload(stream, [{ id: 'A', title: 'Shirt' }])
    const port = new URL(receiver.url).port
    const channel = await createChannel(f, { format: 'csv', destinations: [{ type: 'http', url: `http://Feeds.Partner.Test.:${port}/in` }] })
    asked.length = 0
    expect(await f.run('all')).toMatchObject({ status: 'success' })
    await eventually(async () => ((await history(f, channel.id))[0]?.uploaded === '1' ? true : undefined), 'the push')
    expect(receiver.received).toHaveLength(1)
    expect(asked).toEqual(['feeds.partner.test'])
  })
})
