import { existsSync } from 'node:fs'
import fs from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { Readable, Writable } from 'node:stream'
import { Client as FtpClient } from 'basic-ftp'
import SftpClient from 'ssh2-sftp-client'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startFtpsServer, type FtpServer, type FtpsServer } from '../helpers/ftps-server.js'
import { sshFingerprint, startSftpServer, type SftpServer } from '../helpers/sftp-server.js'

// The servers the destination tests push files to are real (issue 34): OpenSSH's sshd and vsftpd,
// started by the helpers, logged into from Node with the clients the connectors use. What arrives is
// read from the server's directory on this machine.

const clients: { end(): unknown }[] = []
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map(async (client) => client.end()))
})

describe('a real SFTP server (OpenSSH sshd, internal-sftp, chrooted)', () => {
  let server: SftpServer
  beforeAll(async () => {
    server = await startSftpServer()
  })
  afterAll(async () => {
    await server?.stop()
  })

  function sftp(): SftpClient {
    const client = new SftpClient()
    clients.push(client)
    return client
  }
  const base = () => ({ host: server.host, port: server.port, username: server.user, readyTimeout: 5_000, retries: 0 })

  it('logs in with the password, checks the host key against ssh-keygen’s fingerprint, and stores an upload where the test reads it', async () => {
    expect(server.hostKeySha256).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/)
    const seen: string[] = []
    const client = sftp()
    await client.connect({
      ...base(),
      password: server.password,
      hostVerifier: (key: Buffer) => {
        seen.push(sshFingerprint(key))
        return server.verifyHostKey(key)
      },
    })
    expect(seen).toEqual([server.hostKeySha256])

    await client.put(Buffer.from('sku;price\nA1;9.90\n'), '/upload/feed.csv.part')
    await client.rename('/upload/feed.csv.part', '/upload/feed.csv')
    expect((await client.list('/upload')).map((entry) => entry.name)).toEqual(['feed.csv'])
    expect(await fs.readFile(path.join(server.root, 'upload', 'feed.csv'), 'utf8')).toBe('sku;price\nA1;9.90\n')
    expect(existsSync(path.join(server.root, 'upload', 'feed.csv.part'))).toBe(false)

    // Chrooted: "/" is the root, which (sshd's rule for a chroot) is root's and not writable by the user.
    expect((await client.list('/')).map((entry) => entry.name)).toEqual(['upload'])
    await expect(client.put(Buffer.from('x'), '/outside.csv')).rejects.toThrow(/permission denied/i)
  })

  it('logs in with the private key, and with the passphrase-protected key and its passphrase', async () => {
    const withKey = sftp()
    await withKey.connect({ ...base(), privateKey: server.privateKey, hostVerifier: server.verifyHostKey })
    expect(await withKey.exists('/upload')).toBe('d')

    const withPassphrase = sftp()
    await withPassphrase.connect({ ...base(), ...server.passphraseKey, hostVerifier: server.verifyHostKey })
    expect(await withPassphrase.exists('/upload')).toBe('d')
    expect(server.privateKey).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----/)
    await expect(sftp().connect({ ...base(), privateKey: server.passphraseKey.privateKey })).rejects.toThrow(/passphrase/i)
  })

  it('refuses a wrong password, and a host key whose fingerprint is not the expected one fails the connection', async () => {
    await expect(sftp().connect({ ...base(), password: `${server.password}-wrong` })).rejects.toThrow(/authentication/i)

    const otherFingerprint = sshFingerprint(Buffer.from('some other host key'))
    const refused = sftp().connect({ ...base(), password: server.password, hostVerifier: (key: Buffer) => sshFingerprint(key) === otherFingerprint })
    await expect(refused).rejects.toThrow(/verification failed/i)
    // ssh2's other form: hostHash 'sha256' hands the verifier the hex digest.
    const hashed = sftp()
    await hashed.connect({ ...base(), password: server.password, hostHash: 'sha256', hostVerifier: (hex: string) => server.verifyHostKey(hex) })
    expect(await hashed.exists('/upload')).toBe('d')
  })

  it('cuts open connections, and refuses new ones while down, then serves again on the same port', async () => {
    const client = sftp()
    await client.connect({ ...base(), password: server.password })
    expect(await server.dropConnections()).toBeGreaterThanOrEqual(1)
    await expect(client.list('/upload')).rejects.toThrow()

    const port = server.port
    const refusal = await server.dropConnectionsDuring(() => connectError(port))
    expect(refusal).toBe('ECONNREFUSED')
    const again = sftp()
    await again.connect({ ...base(), password: server.password, hostVerifier: server.verifyHostKey })
    expect(await again.exists('/upload')).toBe('d')
  })
})

describe('a real FTPS server (vsftpd, explicit TLS required)', () => {
  let server: FtpsServer
  beforeAll(async () => {
    server = await startFtpsServer()
  })
  afterAll(async () => {
    await server?.stop()
  })

  function ftp(): FtpClient {
    const client = new FtpClient(5_000)
    clients.push({ end: () => client.close() })
    return client
  }
  const login = () => ({ host: server.host, port: server.port, user: server.user, password: server.password })
  const overTls = () => ({ ...login(), secure: true, secureOptions: { ca: server.certificate } })

  it('logs in over TLS checked against its certificate, and stores an upload where the test reads it', async () => {
    const client = ftp()
    await client.access(overTls())
    await client.uploadFrom(Readable.from([Buffer.from('sku;price\nB2;4.50\n')]), 'upload/feed.csv.part')
    await client.rename('upload/feed.csv.part', 'upload/feed.csv')
    expect((await client.list('upload')).map((entry) => [entry.name, entry.size])).toEqual([['feed.csv', 18]])
    expect(await fs.readFile(path.join(server.root, 'upload', 'feed.csv'), 'utf8')).toBe('sku;price\nB2;4.50\n')
    expect(await download(client, 'upload/feed.csv')).toBe('sku;price\nB2;4.50\n')
    expect(await client.pwd()).toBe('/')
  })

  it('refuses a login without TLS, a certificate the client does not trust, and a wrong password', async () => {
    await expect(ftp().access({ ...login(), secure: false })).rejects.toThrow(/530.*encryption/i)
    await expect(ftp().access({ ...login(), secure: true })).rejects.toThrow(/self-signed certificate/i)
    // The slow one: pam_unix pauses about 2 s before it reports a wrong password.
    await expect(ftp().access({ ...overTls(), password: 'wrong' })).rejects.toThrow(/530 Login incorrect/)
  })

  it('cuts open connections, then serves new ones', async () => {
    const client = ftp()
    await client.access(overTls())
    expect(await server.dropConnections()).toBeGreaterThanOrEqual(1)
    await expect(client.list('upload')).rejects.toThrow()
    const again = ftp()
    await again.access(overTls())
    expect(await again.pwd()).toBe('/')
  })
})

describe('a real plain FTP server (vsftpd, ssl_enable=NO)', () => {
  let server: FtpServer
  beforeAll(async () => {
    server = await startFtpsServer({ tls: false })
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('takes an upload without TLS; stop() ends the server and removes its files', async () => {
    expect(server.tls).toBe(false)
    const client = new FtpClient(5_000)
    clients.push({ end: () => client.close() })
    await client.access({ host: server.host, port: server.port, user: server.user, password: server.password })
    await client.uploadFrom(Readable.from([Buffer.from('plain')]), 'upload/plain.csv')
    expect(await fs.readFile(path.join(server.root, 'upload', 'plain.csv'), 'utf8')).toBe('plain')
    client.close()

    await server.stop()
    expect(existsSync(server.root)).toBe(false)
    expect(await connectError(server.port)).toBe('ECONNREFUSED')
  })
})

async function download(client: FtpClient, remotePath: string): Promise<string> {
  const chunks: Buffer[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk)
      done()
    },
  })
  await client.downloadTo(sink, remotePath)
  return Buffer.concat(chunks).toString('utf8')
}

/** The error code of a TCP connection to the port ('ECONNREFUSED' when nothing listens), or 'connected'. */
function connectError(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    socket.on('connect', () => {
      socket.destroy()
      resolve('connected')
    })
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
  })
}
