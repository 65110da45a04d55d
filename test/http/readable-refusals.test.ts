import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setStreamStatus } from '../../src/streams/streams.js'
import { factories } from '../helpers/factories.js'
import { useTestApp, type TestAccount } from '../helpers/test-app.js'
import { RawConnection } from '../stream-api/raw-http.js'
import { listenOnFreePort } from '../helpers/listen.js'

// Every refusal sent before its request's body was read must reach the client: real clients (Node's
// fetch and curl) send 1 MB and 10 MB bodies to each refusing path of both interfaces and must read
// the status and the error body, never a reset connection (EPIPE, ECONNRESET, "other side closed").

const MB = 1024 * 1024
const t = useTestApp({ MAX_UPLOAD_BYTES: String(512 * 1024), RATE_LIMIT_PRODUCTS: '1000', RATE_LIMIT_OTHER: '1000' })
const given = factories(t)
const run = promisify(execFile)

let base = ''
let port = 0
let account: TestAccount
let dir = ''
const streams: Record<string, string> = {}
const bodies: Record<string, { bytes: Buffer; file: string }> = {}

beforeAll(async () => {
  port = await listenOnFreePort(t.app)
  base = `http://127.0.0.1:${port}`
  account = await t.account()
  for (const status of ['active', 'disabled', 'locked', 'locked_upload']) {
    const stream = await given.stream({ account })
    if (status !== 'active') await setStreamStatus(t.db, stream.id, status, t.clock.now())
    streams[status] = stream.id
  }
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'refusals-'))
  for (const size of [1, 10]) {
    // NDJSON rows of random text: valid lines, so that only the refusal under test refuses them.
    const line = (i: number) => `{"id":"p${i}","title":"${randomBytes(300).toString('hex')}"}\n`
    const rows: string[] = []
    for (let bytes = 0, i = 0; bytes < size * MB; i++) {
      rows.push(line(i))
      bytes += rows[rows.length - 1]!.length
    }
    const bytes = Buffer.from(rows.join(''))
    const file = path.join(dir, `${size}mb.ndjson`)
    await fs.writeFile(file, bytes)
    bodies[`${size}`] = { bytes, file }
  }
})

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true })
})

interface Refusal {
  name: string
  method: 'POST' | 'PUT'
  path: () => string
  headers: () => Record<string, string>
  status: number
  /** What the error body's message or detail says. */
  says: RegExp
}

const bearer = () => ({ authorization: `Bearer ${account.token}`, 'content-type': 'application/x-ndjson' })
const refusals: Refusal[] = [
  {
    name: 'stream upload without a token',
    method: 'POST',
    path: () => `/streams/${streams.active}/products`,
    headers: () => ({ 'content-type': 'application/x-ndjson' }),
    status: 401,
    says: /Bearer/,
  },
  {
    name: 'stream upload to a disabled stream',
    method: 'POST',
    path: () => `/streams/${streams.disabled}/products`,
    headers: bearer,
    status: 403,
    says: /disabled/,
  },
  { name: 'stream upload to a locked stream', method: 'POST', path: () => `/streams/${streams.locked}/products`, headers: bearer, status: 423, says: /locked/ },
  {
    name: 'stream upload locked for uploads',
    method: 'PUT',
    path: () => `/streams/${streams.locked_upload}/products`,
    headers: bearer,
    status: 423,
    says: /locked_upload/,
  },
  {
    name: 'stream upload over MAX_UPLOAD_BYTES',
    method: 'POST',
    path: () => `/streams/${streams.active}/products`,
    headers: bearer,
    status: 413,
    says: /larger than/,
  },
  {
    name: 'stream upload with the wrong content type',
    method: 'POST',
    path: () => `/streams/${streams.active}/products`,
    headers: () => ({ ...bearer(), 'content-type': 'text/csv' }),
    status: 415,
    says: /text\/csv/,
  },
  { name: 'stream upload to an unknown stream', method: 'POST', path: () => `/streams/999999/products`, headers: bearer, status: 404, says: /./ },
  {
    name: 'platform project create without a credential',
    method: 'POST',
    path: () => '/platform/v2/projects',
    headers: () => ({}),
    status: 401,
    says: /Unauthorized/,
  },
  {
    name: 'platform project create',
    method: 'POST',
    path: () => '/platform/v2/projects',
    headers: () => ({ 'x-auth-token': account.xAuthToken }),
    status: 413,
    says: /./,
  },
  {
    name: 'platform tag create',
    method: 'POST',
    path: () => '/platform/v2/sites/1/tags',
    headers: () => ({ 'x-auth-token': account.xAuthToken }),
    status: 413,
    says: /./,
  },
  {
    name: 'platform process',
    method: 'POST',
    path: () => '/platform/v2/process/1',
    headers: () => ({ 'x-auth-token': account.xAuthToken }),
    status: 413,
    says: /./,
  },
  {
    name: 'platform channel create',
    method: 'POST',
    path: () => '/platform/v2/sites/1/channels',
    headers: () => ({ 'x-auth-token': account.xAuthToken }),
    status: 413,
    says: /./,
  },
  {
    name: 'withdrawn product upload',
    method: 'POST',
    path: () => '/platform/v2/sites/1/products/1/upload',
    headers: () => ({}),
    status: 410,
    says: /stream interface/,
  },
]

function messageOf(body: unknown): string {
  const parsed = body as { message?: string; errors?: { detail?: string; title?: string }[] }
  return parsed.message ?? parsed.errors?.[0]?.detail ?? parsed.errors?.[0]?.title ?? ''
}

describe.each(['1', '10'])('a %s MB body sent to a refusing path', (size) => {
  it.each(refusals)('fetch reads the refusal: $name', async (refusal) => {
    const response = await fetch(`${base}${refusal.path()}`, { method: refusal.method, headers: refusal.headers(), body: bodies[size]!.bytes })
    expect(response.status).toBe(refusal.status)
    expect(messageOf(await response.json())).toMatch(refusal.says)
  })

  it.each(refusals)('curl reads the refusal: $name', async (refusal) => {
    const headerArgs = Object.entries(refusal.headers()).flatMap(([name, value]) => ['-H', `${name}: ${value}`])
    // No Content-Type of curl's own where the case sends none.
    const noType = 'content-type' in refusal.headers() ? [] : ['-H', 'Content-Type:']
    const { stdout } = await run('curl', [
      '-sS',
      '-X',
      refusal.method,
      ...headerArgs,
      ...noType,
      '--data-binary',
      `@${bodies[size]!.file}`,
      '-w',
      '\n%{http_code}',
      `${base}${refusal.path()}`,
    ])
    const newline = stdout.lastIndexOf('\n')
    expect(Number(stdout.slice(newline + 1))).toBe(refusal.status)
    expect(messageOf(JSON.parse(stdout.slice(0, newline)))).toMatch(refusal.says)
  })
})

describe('after a refusal', () => {
  it('the connection reads the rest of the refused body and then serves the next request', async () => {
    const connection = await RawConnection.open(port)
    try {
      const body = bodies['1']!.bytes
      const head = `POST /streams/${streams.active}/products HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: ${body.length}`
      await connection.write(`${head}\r\n\r\n`)
      const refused = await connection.response()
      expect(refused.statusCode).toBe(401)
      expect(refused.headers.connection).not.toBe('close')
      // The body goes on after the answer, all of it, and the same connection takes the next request.
      await connection.write(body)
      await connection.write(`GET /streams HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${account.token}\r\n\r\n`)
      const next = await connection.response(5000, 1)
      expect(next.statusCode, next.body).toBe(200)
    } finally {
      connection.destroy()
    }
  })
})
