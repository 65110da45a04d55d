import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { contentDisposition, sendFile, type PushFile } from '../../src/feeds/http-push.js'
import { LocalFeedStorage } from '../../src/feeds/local-feed-storage.js'
import { createOutboundGuard } from '../../src/net/outbound-guard.js'

interface Received {
  method: string
  headers: http.IncomingHttpHeaders
  body: Buffer
}

// A receiver that answers with `status`, a reason phrase and a body of its own words: none of them
// may come back in an error text.
let status = 200
let received: Received[] = []
let server: http.Server
let port: number
let dir: string
let file: PushFile
const content = Buffer.concat([Buffer.from('id,title\n1,"ü, ä"\n'), randomBytes(1024 * 1024)])
const open = createOutboundGuard({ allowPrivate: true })
const guarded = createOutboundGuard({ allowPrivate: false })

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({ method: request.method ?? '', headers: request.headers, body: Buffer.concat(chunks) })
      response.writeHead(status, 'SECRET-REASON', { 'content-type': 'text/plain', location: 'http://169.254.169.254/' }).end('SECRET-BODY internal stack trace')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'http-push-'))
  file = { storage: new LocalFeedStorage(dir), key: 'feed.csv', filename: 'feed "2024".csv', contentType: 'text/csv; charset=utf-8' }
  await fs.writeFile(path.join(dir, file.key), content)
})

beforeEach(() => {
  received = []
  status = 200
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  await fs.rm(dir, { recursive: true, force: true })
})

const url = () => `http://127.0.0.1:${port}/upload?key=1`

describe('sendFile', () => {
  it('POSTs the file with its type and name', async () => {
    expect(await sendFile(url(), file, { guard: open, timeoutMs: 10_000 })).toEqual({ ok: true })
    expect(received).toHaveLength(1)
    const [request] = received
    expect(request?.method).toBe('POST')
    expect(request?.body.equals(content)).toBe(true)
    expect(request?.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(request?.headers['content-disposition']).toBe('attachment; filename="feed \\"2024\\".csv"')
    expect(request?.headers['content-length']).toBe(String(content.length))
  })

  it('names the status code only, never the reason phrase or body the server sent', async () => {
    for (const [code, retry] of [
      [500, true],
      [503, true],
      [429, true],
      [408, true],
      [400, false],
      [404, false],
    ] as const) {
      status = code
      const result = await sendFile(url(), file, { guard: open, timeoutMs: 10_000 })
      expect(result).toEqual({ ok: false, kind: 'status', error: `HTTP ${code} ${http.STATUS_CODES[code]}`, retry })
    }
  })

  it('does not follow redirects, nor say where they point', async () => {
    status = 302
    const result = await sendFile(url(), file, { guard: open, timeoutMs: 10_000 })
    expect(result).toEqual({ ok: false, kind: 'status', error: 'HTTP 302 Found (redirects are not followed)', retry: false })
    expect(received).toHaveLength(1)
  })

  it('reports a closed port as "could not connect", nothing more', async () => {
    const closed = http.createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const closedPort = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    const result = await sendFile(`http://127.0.0.1:${closedPort}/`, file, { guard: open, timeoutMs: 10_000 })
    expect(result).toEqual({ ok: false, kind: 'unreachable', error: `could not connect to 127.0.0.1:${closedPort}`, retry: true })
  })

  it('reports a timeout when the server accepts and never answers', async () => {
    const silent = http.createServer(() => {})
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    try {
      const result = await sendFile(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, file, { guard: open, timeoutMs: 200 })
      expect(result).toEqual({ ok: false, kind: 'timeout', error: 'no response within 0.2 s', retry: true })
    } finally {
      silent.closeAllConnections()
      await new Promise((resolve) => silent.close(resolve))
    }
  })

  it('ends at once when aborted', async () => {
    const silent = http.createServer(() => {})
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    try {
      const abort = new AbortController()
      const sending = sendFile(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, file, { guard: open, timeoutMs: 60_000, signal: abort.signal })
      setTimeout(() => abort.abort(), 50)
      expect(await sending).toMatchObject({ ok: false, kind: 'aborted' })
    } finally {
      silent.closeAllConnections()
      await new Promise((resolve) => silent.close(resolve))
    }
  })

  it('refuses loopback in any spelling before connecting, unless private targets are allowed', async () => {
    for (const spelling of ['127.0.0.1', 'localhost', '2130706433', '127.1', '0x7f.1', '[::ffff:127.0.0.1]']) {
      const result = await sendFile(`http://${spelling}:${port}/`, file, { guard: guarded, timeoutMs: 10_000 })
      expect(result, spelling).toMatchObject({
        ok: false,
        kind: 'refused',
        retry: false,
        error: expect.stringMatching(/^refused by the outbound guard: .*loopback/),
      })
    }
    expect(received).toHaveLength(0)
  })

  it('checks the address a name resolves to when it connects', async () => {
    const rebinding = createOutboundGuard({ allowPrivate: false, resolve: async () => [{ address: '127.0.0.1', family: 4 }] })
    const result = await sendFile(`http://receiver.example:${port}/`, file, { guard: rebinding, timeoutMs: 10_000 })
    expect(result).toEqual({
      ok: false,
      kind: 'refused',
      retry: false,
      error: 'refused by the outbound guard: receiver.example resolves to a loopback address',
    })
    const mixed = createOutboundGuard({
      allowPrivate: false,
      resolve: async () => [
        { address: '93.184.215.14', family: 4 },
        { address: '10.0.0.7', family: 4 },
      ],
    })
    expect(await sendFile(`http://receiver.example:${port}/`, file, { guard: mixed, timeoutMs: 10_000 })).toMatchObject({ kind: 'refused' })
    expect(received).toHaveLength(0)
    // The same name through a guard that allows private targets reaches the receiver.
    const allowed = createOutboundGuard({ allowPrivate: true, resolve: async () => [{ address: '127.0.0.1', family: 4 }] })
    expect(await sendFile(`http://receiver.example:${port}/`, file, { guard: allowed, timeoutMs: 10_000 })).toEqual({ ok: true })
  })

  it('never throws: a missing file or a bad URL is a failed result', async () => {
    const missing = await sendFile(url(), { ...file, key: 'nope.csv' }, { guard: open, timeoutMs: 1000 })
    expect(missing).toMatchObject({ ok: false, kind: 'missing', retry: false })
    expect(await sendFile('ftp://example/', file, { guard: open, timeoutMs: 1000 })).toMatchObject({ ok: false, kind: 'refused' })
    expect(await sendFile('not a url', file, { guard: open, timeoutMs: 1000 })).toMatchObject({ ok: false, kind: 'refused' })
    expect(await sendFile(`http://user:pw@127.0.0.1:${port}/`, file, { guard: open, timeoutMs: 1000 })).toMatchObject({ ok: false, kind: 'refused' })
    expect(received).toHaveLength(0)
  })
})

describe('contentDisposition', () => {
  it('quotes the name and adds filename* for non-ASCII names', () => {
    expect(contentDisposition('feed.csv')).toBe('attachment; filename="feed.csv"')
    expect(contentDisposition('a\\b"c.csv')).toBe('attachment; filename="a\\\\b\\"c.csv"')
    expect(contentDisposition('ünï.csv')).toBe(`attachment; filename="_n_.csv"; filename*=UTF-8''%C3%BCn%C3%AF.csv`)
    expect(contentDisposition("ü's (1).csv")).toBe(`attachment; filename="_'s (1).csv"; filename*=UTF-8''%C3%BC%27s%20%281%29.csv`)
  })
})
