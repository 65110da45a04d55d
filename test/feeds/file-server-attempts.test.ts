import net from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { remotePaths } from '../../src/feeds/file-server-push.js'
import { sendByFtps } from '../../src/feeds/ftps-push.js'
import type { FileServerSettings } from '../../src/db/schema.js'

// What a file server delivery names and how it counts a failure, against the edge cases real servers
// and channels produce: a file name at the 255-byte limit, a server whose TLS handshake is cut.

const SETTINGS = { host: 'localhost', port: 21, user: 'feeds', directory: 'out', temp_rename: true } as unknown as FileServerSettings

describe('a delivery to a file server', () => {
  it('writes a temporary name within 255 bytes, however long the file name the channel allows', () => {
    for (const filename of [`${'L'.repeat(251)}.csv`, `${'ü'.repeat(125)}.xml`, 'feed.csv']) {
      const { final, upload } = remotePaths(SETTINGS, filename, 'push-12345')
      expect(final).toBe(`out/${filename}`)
      const name = upload.slice('out/'.length)
      expect(Buffer.byteLength(name), filename.slice(0, 20)).toBeLessThanOrEqual(255)
      expect(name).toMatch(/^\.(L+|ü+|feed)(\.csv|\.xml)?.*\.push-12345\.part$/u)
      expect(Buffer.from(name).toString(), 'no character cut in two').toBe(name)
    }
    expect(remotePaths(SETTINGS, 'feed.csv', 'push-1').upload).toBe('out/.feed.csv.push-1.part')
  })

  const servers: net.Server[] = []
  afterAll(() => servers.forEach((server) => server.close()))

  it('tries FTPS again when the connection drops in the TLS handshake, which is no certificate refusal', async () => {
    // Answers AUTH TLS as a server would, then resets the connection before any handshake.
    const server = net.createServer((socket) => {
      socket.write('220 ready\r\n')
      socket.on('data', (data) => {
        if (data.toString().startsWith('AUTH TLS')) socket.end('234 go ahead\r\n', () => socket.resetAndDestroy())
      })
      socket.on('error', () => {})
    })
    servers.push(server)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as net.AddressInfo).port
    const file = { storage: { open: async () => undefined }, key: 'k', filename: 'feed.csv', contentType: 'text/csv' }
    const settings = { ...SETTINGS, port } as FileServerSettings
    const result = await sendByFtps({ settings, credentials: { password: 'secret' }, address: '127.0.0.1' }, file, { timeoutMs: 10_000 })
    expect(result).toMatchObject({ ok: false, kind: 'unreachable', retry: true })
    expect(result.ok ? '' : result.error).not.toMatch(/certificate/)
  })
})
