import net from 'node:net'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'
import type { TestContext } from '../helpers/test-app.js'
import { eventually } from '../helpers/eventually.js'

// Raw HTTP/1.1 over a socket, for what app.inject cannot do: a body cut off mid-way, or sent slowly.

export interface RawResponse {
  statusCode: number
  headers: Record<string, string>
  body: string
  /** Bytes the response took on the wire. */
  length: number
}

export class RawConnection {
  private received = Buffer.alloc(0)
  private closed = false
  private readonly waiters = new Set<() => void>()

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk])
      this.wake()
    })
    const close = () => {
      this.closed = true
      this.wake()
    }
    socket.on('close', close)
    // A server that answers early may reset the connection while we still write: not a test failure.
    socket.on('error', close)
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host: '127.0.0.1' }, () => resolve(new RawConnection(socket)))
      socket.once('error', reject)
    })
  }

  /** Writes and waits until the data is handed to the kernel (or the socket is gone). */
  write(data: string | Buffer): Promise<void> {
    if (this.closed || this.socket.destroyed) return Promise.resolve()
    return new Promise((resolve) => this.socket.write(data, () => resolve()))
  }

  destroy(): void {
    this.socket.destroy()
  }

  /** The first complete response (Content-Length framed), or the one after `skip` others; rejects after `timeoutMs`. */
  async response(timeoutMs = 5000, skip = 0): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      let parsed = parseResponse(this.received)
      for (let i = 0; i < skip && parsed; i++) parsed = parseResponse(this.received.subarray(parsed.length))
      if (parsed) return parsed
      if (this.closed) throw new Error(`connection closed before a complete response: ${JSON.stringify(this.received.toString('utf8'))}`)
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no complete response within ${timeoutMs} ms: ${JSON.stringify(this.received.toString('utf8'))}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left)
        function done() {
          clearTimeout(timer)
          resolve()
        }
        this.waiters.add(done)
      })
    }
  }

  private wake(): void {
    for (const waiter of this.waiters) waiter()
    this.waiters.clear()
  }
}

function parseResponse(data: Buffer): RawResponse | undefined {
  const end = data.indexOf('\r\n\r\n')
  if (end === -1) return undefined
  const [statusLine = '', ...lines] = data.subarray(0, end).toString('latin1').split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  const length = Number(headers['content-length'] ?? 0)
  if (data.length < end + 4 + length) return undefined
  return {
    statusCode: Number(statusLine.split(' ')[1]),
    headers,
    body: data.subarray(end + 4, end + 4 + length).toString('utf8'),
    length: end + 4 + length,
  }
}

/** The head of a stream upload request. */
export function uploadHead(streamId: string, token: string, contentLength: number, contentType = 'application/x-ndjson'): string {
  return [
    `POST /streams/${streamId}/products HTTP/1.1`,
    'Host: 127.0.0.1',
    `Authorization: Bearer ${token}`,
    `Content-Type: ${contentType}`,
    `Content-Length: ${contentLength}`,
    '',
    '',
  ].join('\r\n')
}

/**
 * Settings that keep the server's background workers (webhook dispatch, the scheduler's tick) from
 * opening transactions of their own: a test that counts the server's open transactions counts only
 * its uploads' then (a webhook claim caught between its statements failed such a count, measured).
 */
export const NO_BACKGROUND_TRANSACTIONS = { WEBHOOK_CONCURRENCY: '0', SCHEDULER_INTERVAL_SECONDS: '0' }

/**
 * STREAM_REQUEST_TIMEOUT_MS of the files that test the request deadline: long enough for an honest
 * upload on a loaded machine (they run beside the forks, vitest.config.ts: 300 ms once cut a two-row
 * upload short there), short enough to keep the files quick.
 */
export const REQUEST_DEADLINE_MS = 1000

/** Other backends of the test database that are inside a transaction, with what they run. */
export async function openTransactions(t: TestContext): Promise<{ state: string; query: string; waitEventType: string | null }[]> {
  const { rows } = await sql<{ state: string; query: string; waitEventType: string | null }>`
    SELECT state, query, wait_event_type AS "waitEventType" FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
  `.execute(t.db)
  return rows
}

/** What `app` holds of upload bodies (GET /healthz): their bytes, and how many are being received. */
export async function spoolUsage(app: FastifyInstance): Promise<{ bytes: number; receiving: number }> {
  const health = await app.inject({ method: 'GET', url: '/healthz' })
  return (health.json() as { spool: { bytes: number; receiving: number } }).spool
}

/**
 * Waits until the server is receiving `uploads` upload bodies, and checks that it holds no
 * transaction for them meanwhile: a body on its way costs no connection.
 */
export async function bodyBeingReceived(t: TestContext, uploads = 1, app: FastifyInstance = t.app): Promise<void> {
  await eventually(async () => (await spoolUsage(app)).receiving >= uploads, `the server to receive ${uploads} upload bodies`)
  expect(await openTransactions(t)).toEqual([])
}

/** Waits until no transaction of the server is open: whatever it did with a request has finished. */
export async function serverSettled(t: TestContext): Promise<void> {
  await eventually(async () => (await openTransactions(t)).length === 0, 'no transaction of the server left open')
}
