import { readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { X509Certificate } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { client } from '../helpers/clients.js'
import { feedPaths, type ChannelJson } from '../helpers/responses.js'
import { eventually } from '../helpers/eventually.js'
import { sftpLogin, startSftpServer, type SftpServer } from '../helpers/sftp-server.js'
import { startFtpsServer, type FtpsServer } from '../helpers/ftps-server.js'

// Channel destinations on real file servers (issue 34): OpenSSH's sshd (internal-sftp) and vsftpd
// with explicit TLS, started on loopback ports, which the operator setting allows here. Every check
// is through HTTP: the channel's API, its deliveries, the feed the platform serves, and the files
// the servers received on disk.

const t = useTestApp({
  ...HIGH_LIMITS,
  RUN_POLL_SECONDS: '0.5',
  SCHEDULER_INTERVAL_SECONDS: '0',
  ALLOW_PRIVATE_DESTINATIONS: 'true',
  PUSH_RETRY_BASE_SECONDS: '0.2',
  PUSH_TIMEOUT_SECONDS: '15',
})

let sftp: SftpServer
let ftps: FtpsServer

beforeAll(async () => {
  ;[sftp, ftps] = await Promise.all([startSftpServer(), startFtpsServer()])
}, 60_000)

afterAll(async () => {
  await t.app.close()
  await Promise.all([sftp?.stop(), ftps?.stop()])
})

const ROWS = [
  { id: 'A', title: 'Shirt', price: '10.00 EUR' },
  { id: 'B', title: 'Shoe, "red"', price: '25.00 EUR' },
]

async function exportedSite(f: ImportFixture): Promise<void> {
  const stream = await f.createStream()
  await f.attach(stream)
  expect((await f.upload(stream, ROWS)).statusCode).toBe(202)
}

function sftpDestination(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...sftpLogin(sftp), directory: 'upload', ...extra }
}

function ftpsDestination(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const pin = new X509Certificate(ftps.certificate).fingerprint256
  return {
    type: 'ftps',
    host: ftps.host,
    port: ftps.port,
    user: ftps.user,
    password: ftps.password,
    tls_certificate_sha256: pin,
    directory: 'upload',
    ...extra,
  }
}

async function channelWith(f: ImportFixture, destinations: object[], filename: string): Promise<ChannelJson> {
  const response = await f.c.post(`/sites/${f.site.id}/channels`, {
    name: 'Files',
    export_name: 'generic',
    format: 'csv',
    filenames: [{ type: null, filename }],
    destinations: [{ type: 'feed' }, ...destinations],
  })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ Channels: ChannelJson[] }>().Channels[0]!
}

interface Attempt {
  outcome: string
  bytes: number | null
  remote_path: string | null
  error: string | null
  destination: string
  attempt: number
}

async function attempts(f: ImportFixture, channelId: string): Promise<Attempt[]> {
  const response = await f.c.get(`/sites/${f.site.id}/channels/${channelId}/deliveries`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ Attempts: Attempt[] }>().Attempts
}

async function servedFeed(f: ImportFixture, channelId: string): Promise<Buffer> {
  const channel = (await f.c.get(`/sites/${f.site.id}/channels/${channelId}`)).json<{ Channels: ChannelJson[] }>().Channels[0]!
  const [feed] = feedPaths(channel)
  const response = await t.request({ method: 'GET', url: feed! })
  expect(response.statusCode).toBe(200)
  return response.rawPayload
}

describe('SFTP and FTPS destinations', () => {
  it('delivers exactly the feed bytes to SFTP and FTPS, under a temporary name renamed into place, and records each attempt', async () => {
    const f = await importFixture(t)
    await exportedSite(f)
    const channel = await channelWith(f, [sftpDestination(), ftpsDestination()], 'feed-{site_id}.csv')
    const run = await f.run('all')
    expect(run.status, run.message).toBe('success')
    const delivered = await eventually(async () => {
      const list = await attempts(f, channel.id)
      return list.filter((a) => a.outcome === 'delivered').length === 2 ? list : undefined
    }, 'both deliveries')
    const feed = await servedFeed(f, channel.id)
    const name = `feed-${f.site.id}.csv`
    expect(await fs.readFile(path.join(sftp.root, 'upload', name))).toEqual(feed)
    expect(await fs.readFile(path.join(ftps.root, 'upload', name))).toEqual(feed)
    // No temporary file is left behind on either server.
    expect(await fs.readdir(path.join(sftp.root, 'upload'))).toEqual([name])
    expect(await fs.readdir(path.join(ftps.root, 'upload'))).toEqual([name])
    for (const attempt of delivered) {
      expect(attempt).toMatchObject({ outcome: 'delivered', bytes: feed.length, remote_path: `upload/${name}`, error: null, attempt: 1 })
    }
    expect(delivered.map((a) => a.destination.split(':')[0]).sort()).toEqual(['ftps', 'sftp'])
    const history = (await f.c.get(`/sites/${f.site.id}/channels/${channel.id}/history`)).json<{ Channels: { history: Record<string, string>[] }[] }>()
    await eventually(async () => {
      const entry = (await f.c.get(`/sites/${f.site.id}/channels/${channel.id}/history`)).json<{ Channels: { history: Record<string, string>[] }[] }>()
      return entry.Channels[0]?.history[0]?.uploaded === '1'
    }, 'uploaded = 1')
    expect(history.Channels[0]?.history).toHaveLength(1)
  })

  it('shows the servers without their credentials, keeps them when a change leaves them out, and tests a destination', async () => {
    const f = await importFixture(t)
    const keyed = sftpDestination({ password: undefined, private_key: sftp.passphraseKey.privateKey, passphrase: sftp.passphraseKey.passphrase })
    const channel = await channelWith(f, [keyed, ftpsDestination()], 'keys.csv')
    const servers = Object.values(channel.feed_destinations as Record<string, { destination_id: number; server?: Record<string, unknown> }>)
    expect(servers.map((d) => d.destination_id)).toEqual([1, 3, 4])
    expect(servers[1]?.server).toEqual({
      host: '127.0.0.1',
      port: sftp.port,
      user: sftp.user,
      directory: 'upload',
      host_key_sha256: sftp.hostKeySha256,
      temp_rename: true,
      credentials: 'stored',
    })
    // A change that gives the same servers without credentials keeps them: the test still logs in.
    const { password: _p, private_key: _k, passphrase: _s, ...withoutSecrets } = keyed
    const { password: _f, ...ftpsWithout } = ftpsDestination()
    const feedTokens = (channelId: string) =>
      t.db.selectFrom('channel_destination').select('token').where('channel_id', '=', channelId).where('kind', '=', 'feed').execute()
    const tokensBefore = await feedTokens(channel.id)
    expect(tokensBefore).toEqual([{ token: expect.stringMatching(/^\S{16,}$/) }])
    const changed = await f.c.put(`/sites/${f.site.id}/channels/${channel.id}`, { destinations: [{ type: 'feed' }, withoutSecrets, ftpsWithout] })
    expect(changed.statusCode, changed.body).toBe(200)
    const ids = Object.keys(changed.json<{ Channels: ChannelJson[] }>().Channels[0]!.feed_destinations)
    // Given again as they were, the destinations are the same ones: their ids, and the feed URL's token a merchant gave Google.
    expect(ids).toEqual(Object.keys(channel.feed_destinations))
    expect(await feedTokens(channel.id)).toEqual(tokensBefore)
    // The activity log has the servers' settings, and their credentials only as changed (when given).
    const log = (await f.c.get(`/activity?target_type=channel&target_id=${channel.id}`)).json<{
      Activity: { action: string; changes: Record<string, unknown> }[]
    }>()
    // (The change above gave the same servers and kept their credentials: it changed nothing, and recorded nothing.)
    expect(log.Activity.map((e) => e.action)).toEqual(['channel.created'])
    expect(log.Activity[0]?.changes.destination_credentials).toBe('changed')
    expect(JSON.stringify(log.Activity[0]?.changes.destinations)).toContain(`"user":"${sftp.user}"`)
    for (const id of ids.slice(1)) {
      const test = await f.c.post(`/sites/${f.site.id}/channels/${channel.id}/destinations/${id}/test`)
      expect(test.statusCode, test.body).toBe(200)
      expect(test.json<{ Tests: { ok: boolean; error: string | null }[] }>().Tests[0]).toMatchObject({ ok: true, error: null })
    }
    // The test removed its file.
    expect(await fs.readdir(path.join(sftp.root, 'upload')).then((names) => names.filter((n) => n.includes('catalog-platform-test')))).toEqual([])
    // A new server without credentials is refused, naming the field.
    const refused = await f.c.put(`/sites/${f.site.id}/channels/${channel.id}`, {
      destinations: [{ ...withoutSecrets, user: 'someone-else' }],
    })
    expect(refused.statusCode).toBe(400)
    expect(refused.json<{ message: string }>().message).toMatch(/destinations\[0\]\.password/)
    // Another account: its channel's destinations are not found.
    const other = await client(t)
    expect((await other.post(`/sites/${f.site.id}/channels/${channel.id}/destinations/${ids[1]}/test`)).statusCode).toBe(404)
    expect((await other.get(`/sites/${f.site.id}/channels/${channel.id}/deliveries`)).statusCode).toBe(404)
  })

  it('refuses a host key that does not match: the test says so, the delivery fails without a retry, nothing is written', async () => {
    const f = await importFixture(t)
    await exportedSite(f)
    const wrong = `SHA256:${Buffer.alloc(32, 7).toString('base64').replace(/=+$/, '')}`
    const channel = await channelWith(f, [sftpDestination({ host_key_sha256: wrong, directory: 'upload/wrong-key' })], 'never.csv')
    const id = Object.keys(channel.feed_destinations)[1]!
    const test = (await f.c.post(`/sites/${f.site.id}/channels/${channel.id}/destinations/${id}/test`)).json<{ Tests: { ok: boolean; error: string }[] }>()
    expect(test.Tests[0]?.ok).toBe(false)
    expect(test.Tests[0]?.error).toContain(`host key is ${sftp.hostKeySha256}, not the ${wrong}`)
    const run = await f.run('all')
    const failed = await eventually(async () => {
      const list = await attempts(f, channel.id)
      return list.length > 0 ? list : undefined
    }, 'the failed delivery')
    expect(failed).toEqual([expect.objectContaining({ outcome: 'failed', attempt: 1, bytes: null })])
    const errors = await eventually(async () => {
      const found = await f.errors(run.pid)
      return found.length > 0 ? found : undefined
    }, 'the site error')
    expect(errors[0]?.message).toMatch(/host key/)
    await expect(fs.access(path.join(sftp.root, 'upload', 'wrong-key'))).rejects.toThrow()
  })

  it('retries a delivery whose connection drops mid-upload, leaving the previous file whole meanwhile', async () => {
    const f = await importFixture(t)
    await exportedSite(f)
    // A proxy that cuts the first connection after the first 64 KiB it forwards to the server.
    const target = path.join(sftp.root, 'upload', 'dropped.csv')
    // What the receiver would read at the moment the connection drops.
    let seenAtCut = ''
    const proxy = await cuttingProxy(sftp.port, 64 * 1024, () => (seenAtCut = readFileSync(target, 'utf8')))
    try {
      const channel = await channelWith(f, [sftpDestination({ port: proxy.port })], 'dropped.csv')
      await fs.writeFile(target, 'the previous file\n')
      const stream = await f.createStream()
      await f.attach(stream)
      const big = Array.from({ length: 4000 }, (_, i) => ({ id: `P${i}`, title: `Product ${i} ${'x'.repeat(200)}` }))
      expect((await f.upload(stream, big)).statusCode).toBe(202)
      proxy.cutNext()
      await f.run('all')
      const list = await eventually(async () => {
        const found = await attempts(f, channel.id)
        return found.some((a) => a.outcome === 'delivered') ? found : undefined
      }, 'the retried delivery')
      expect(list.map((a) => a.outcome)).toEqual(['delivered', 'retrying'])
      expect(seenAtCut).toBe('the previous file\n')
      expect(await fs.readFile(target)).toEqual(await servedFeed(f, channel.id))
      expect((await fs.readdir(path.join(sftp.root, 'upload'))).filter((n) => n.endsWith('.part'))).toEqual([])
    } finally {
      await proxy.close()
    }
  })

  it('refuses a destination it could not use, with a 400 naming the field, and saves nothing', async () => {
    const f = await importFixture(t)
    for (const [destination, named] of [
      [sftpDestination({ host_key_sha256: undefined }), /destinations\[0\]\.host_key_sha256: required for SFTP/],
      [sftpDestination({ host_key_sha256: 'MD5:aa:bb' }), /host_key_sha256: a SHA-256 fingerprint/],
      [sftpDestination({ host: 'bad host name' }), /destinations\[0\]\.host: .* is not a host name/],
      [sftpDestination({ port: 70000 }), /destinations\[0\]\.port: a port from 1 to 65535/],
      [sftpDestination({ user: '' }), /destinations\[0\]\.user: must not be empty/],
      [sftpDestination({ password: undefined, private_key: 'not a key' }), /destinations\[0\]\.private_key: not a private key/],
      [
        sftpDestination({ password: undefined, private_key: sftp.passphraseKey.privateKey, passphrase: 'wrong' }),
        /private_key: not a private key this passphrase opens/,
      ],
      [sftpDestination({ directory: 'up\u0000load' }), /destinations\[0\]\.directory/],
      [ftpsDestination({ private_key: sftp.privateKey }), /an FTPS login takes a password, not a key/],
      [ftpsDestination({ tls_certificate_sha256: 'abc' }), /tls_certificate_sha256: a SHA-256 fingerprint/],
      [ftpsDestination({ insecure: 'yes' }), /destinations\[0\]\.insecure: true or false/],
      [{ type: 'scp', host: 'x' }, /destinations.0.type: must be one of feed, http, sftp, ftps/],
      [sftpDestination({ host: '169.254.169.254' }), /destinations\[0\]\.host: .* is not allowed/],
    ] as const) {
      const response = await f.c.post(`/sites/${f.site.id}/channels`, { name: 'Bad', export_name: 'generic', destinations: [destination] })
      expect(response.statusCode, JSON.stringify(destination)).toBe(400)
      expect(response.json<{ message: string }>().message).toMatch(named)
    }
    expect((await f.c.get(`/sites/${f.site.id}/channels`)).json<{ Channels: unknown[] }>().Channels).toEqual([])
  })

  it('asks for the credentials again when a change would expose them, and refuses a server without TLS', async () => {
    const f = await importFixture(t)
    const channel = await channelWith(f, [sftpDestination(), ftpsDestination()], 'asks.csv')
    const { password: _s, ...sftpWithout } = sftpDestination()
    const { password: _f, ...ftpsWithout } = ftpsDestination()
    const otherKey = `SHA256:${Buffer.alloc(32, 9).toString('base64').replace(/=+$/, '')}`
    for (const [destination, field] of [
      [{ ...ftpsWithout, insecure: true }, 'destinations[0].password'],
      [{ ...ftpsWithout, tls_certificate_sha256: undefined }, 'destinations[0].password'],
      [{ ...sftpWithout, host_key_sha256: otherKey }, 'destinations[0].password'],
    ] as const) {
      const response = await f.c.put(`/sites/${f.site.id}/channels/${channel.id}`, { destinations: [destination] })
      expect(response.statusCode, JSON.stringify(destination)).toBe(400)
      expect(response.json<{ message: string }>().message).toContain(field)
    }
    // A server that offers no TLS: refused before the login, and said so.
    const plain = await startFtpsServer({ tls: false })
    try {
      const response = await f.c.post(`/sites/${f.site.id}/channels`, {
        name: 'Plain',
        export_name: 'generic',
        destinations: [{ type: 'ftps', host: plain.host, port: plain.port, user: plain.user, password: plain.password }],
      })
      const created = response.json<{ Channels: ChannelJson[] }>().Channels[0]!
      const id = Object.keys(created.feed_destinations)[0]!
      const test = (await f.c.post(`/sites/${f.site.id}/channels/${created.id}/destinations/${id}/test`)).json<{ Tests: { ok: boolean; error: string }[] }>()
      expect(test.Tests[0]).toMatchObject({ ok: false, error: expect.stringMatching(/refused TLS .*nothing was sent/) as string })
      expect(plain.log()).not.toContain(`PASS ${plain.password}`)
    } finally {
      await plain.stop()
    }
  })

  it('runs at most two tests of an account at once: a third is a 429 while they hold their connections', async () => {
    const f = await importFixture(t)
    const silent = net.createServer((socket) => socket.on('error', () => {}))
    const held = new Set<net.Socket>()
    silent.on('connection', (socket) => held.add(socket))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    try {
      const port = (silent.address() as net.AddressInfo).port
      const channel = await channelWith(f, [sftpDestination({ port })], 'silent.csv')
      const id = Object.keys(channel.feed_destinations)[1]!
      const url = `/sites/${f.site.id}/channels/${channel.id}/destinations/${id}/test`
      const first = [f.c.post(url), f.c.post(url)]
      await eventually(async () => held.size >= 2, 'two tests connected')
      const third = await f.c.post(url)
      expect(third.statusCode).toBe(429)
      expect(third.headers['retry-after']).toBe('5')
      for (const socket of held) socket.destroy()
      for (const answer of await Promise.all(first)) expect(answer.json<{ Tests: { ok: boolean }[] }>().Tests[0]?.ok).toBe(false)
    } finally {
      for (const socket of held) socket.destroy()
      await new Promise((resolve) => silent.close(resolve))
    }
  })

  it('never shows a credential: not in a channel, a test, the deliveries, the activity log or a site error', async () => {
    const f = await importFixture(t)
    await exportedSite(f)
    const secretPassword = sftp.password
    const channel = await channelWith(f, [sftpDestination({ password: 'not-the-password' }), ftpsDestination()], 'secret.csv')
    const run = await f.run('all')
    await eventually(async () => (await attempts(f, channel.id)).length >= 2, 'the attempts')
    const texts = [
      (await f.c.get(`/sites/${f.site.id}/channels/${channel.id}`)).body,
      (await f.c.get(`/sites/${f.site.id}/channels`)).body,
      (await f.c.get(`/sites/${f.site.id}/channels/${channel.id}/deliveries`)).body,
      (await f.c.get('/activity')).body,
      (await f.c.get(`/sites/${f.site.id}/errors?pid=${run.pid}`)).body,
      JSON.stringify(await t.db.selectFrom('channel_destination').selectAll().where('channel_id', '=', channel.id).execute()),
    ]
    for (const text of texts) {
      for (const secret of ['not-the-password', secretPassword, ftps.password]) expect(text).not.toContain(secret)
    }
    const refused = (await attempts(f, channel.id)).find((a) => a.destination.startsWith('sftp'))
    expect(refused).toMatchObject({ outcome: 'failed', error: expect.stringMatching(/refused the login/) as string })
  })
})

/** A TCP proxy to a local port that, when asked, cuts its next connection after `bytes` forwarded upstream. */
async function cuttingProxy(targetPort: number, bytes: number, onCut: () => void) {
  let cutNext = false
  const sockets = new Set<net.Socket>()
  const server = net.createServer((downstream) => {
    const upstream = net.connect(targetPort, '127.0.0.1')
    sockets.add(downstream).add(upstream)
    const cut = cutNext
    cutNext = false
    let forwarded = 0
    downstream.on('data', (chunk: Buffer) => {
      forwarded += chunk.length
      if (cut && forwarded > bytes) {
        onCut()
        downstream.destroy()
        upstream.destroy()
        return
      }
      upstream.write(chunk)
    })
    upstream.pipe(downstream)
    for (const socket of [downstream, upstream]) socket.on('error', () => {}).on('close', () => sockets.delete(socket))
    downstream.on('close', () => upstream.destroy())
    upstream.on('close', () => downstream.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as net.AddressInfo).port,
    cutNext: () => (cutNext = true),
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
