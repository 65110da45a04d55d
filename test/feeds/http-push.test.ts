import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { contentDisposition, pushFile } from '../../src/feeds/http-push.js'

interface Received {
  method: string
  headers: http.IncomingHttpHeaders
  body: Buffer
}

// A receiver that answers each request with the next status of `plan` (the last one repeats).
let plan: number[] = []
let received: Received[] = []
let server: http.Server
let url: string
let dir: string
let file: { path: string; filename: string; contentType: string }
const content = Buffer.concat([Buffer.from('id,title\n1,"ü, ä"\n'), randomBytes(1024 * 1024)])

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({ method: request.method ?? '', headers: request.headers, body: Buffer.concat(chunks) })
      const status = plan[Math.min(received.length - 1, plan.length - 1)] ?? 200
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status >= 300 ? `refused: status ${status}` : 'ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/upload?key=1`
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'http-push-'))
  file = { path: path.join(dir, 'feed.csv'), filename: 'feed "2024".csv', contentType: 'text/csv; charset=utf-8' }
  await fs.writeFile(file.path, content)
})

beforeEach(() => {
  received = []
})

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
  await fs.rm(dir, { recursive: true, force: true })
})

const options = { backoffMs: 1 }

describe('pushFile', () => {
  it('POSTs the file with its type and name on the first try', async () => {
    plan = [200]
    expect(await pushFile(url, file, options)).toEqual({ ok: true, attempts: 1 })
    expect(received).toHaveLength(1)
    const [request] = received
    expect(request?.method).toBe('POST')
    expect(request?.body.equals(content)).toBe(true)
    expect(request?.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(request?.headers['content-disposition']).toBe('attachment; filename="feed \\"2024\\".csv"')
    expect(request?.headers['content-length']).toBe(String(content.length))
  })

  it('retries server errors and succeeds on the third try', async () => {
    plan = [500, 503, 201]
    expect(await pushFile(url, file, options)).toEqual({ ok: true, attempts: 3 })
    expect(received.map((r) => r.body.equals(content))).toEqual([true, true, true])
  })

  it('gives up after the attempts, naming the status', async () => {
    plan = [500]
    const result = await pushFile(url, file, { ...options, attempts: 4 })
    expect(result).toEqual({ ok: false, attempts: 4, error: expect.stringMatching(/^HTTP 500 Internal Server Error: refused: status 500$/) })
    expect(received).toHaveLength(4)
  })

  it('does not retry a client error other than 408 and 429', async () => {
    plan = [400]
    expect(await pushFile(url, file, options)).toEqual({ ok: false, attempts: 1, error: expect.stringContaining('HTTP 400') })
    plan = [429, 408, 200]
    received = []
    expect(await pushFile(url, file, options)).toEqual({ ok: true, attempts: 3 })
  })

  it('does not follow redirects', async () => {
    plan = [302]
    expect(await pushFile(url, file, options)).toEqual({ ok: false, attempts: 1, error: expect.stringContaining('HTTP 302') })
  })

  it('reports a refused connection after retrying it', async () => {
    const closed = http.createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    const result = await pushFile(`http://127.0.0.1:${port}/`, file, options)
    expect(result).toEqual({ ok: false, attempts: 3, error: expect.stringContaining('ECONNREFUSED') })
  })

  it('reports a timeout', async () => {
    const silent = http.createServer(() => {})
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    try {
      const result = await pushFile(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, file, { ...options, attempts: 2, timeoutMs: 200 })
      expect(result).toEqual({ ok: false, attempts: 2, error: 'no response within 200 ms' })
    } finally {
      silent.closeAllConnections()
      await new Promise((resolve) => silent.close(resolve))
    }
  })

  it('never throws: a missing file or a bad URL is a failed result', async () => {
    const missing = await pushFile(url, { ...file, path: path.join(dir, 'nope.csv') }, options)
    expect(missing).toEqual({ ok: false, attempts: 1, error: expect.stringContaining('ENOENT') })
    expect(await pushFile('ftp://example/', file, options)).toEqual({ ok: false, attempts: 0, error: 'not an http(s) URL: ftp://example/' })
    expect(await pushFile('not a url', file, options)).toMatchObject({ ok: false, attempts: 0 })
    expect(received).toHaveLength(0)
  })

  it('uses the fetch it is given', async () => {
    const calls: string[] = []
    const fake = (async (input: string | URL | Request) => {
      calls.push(String(input))
      return new Response('nope', { status: 503 })
    }) as typeof fetch
    expect(await pushFile('https://receiver.example/x', file, { ...options, attempts: 2, fetch: fake })).toEqual({ ok: false, attempts: 2, error: 'HTTP 503: nope' })
    expect(calls).toEqual(['https://receiver.example/x', 'https://receiver.example/x'])
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
