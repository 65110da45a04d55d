import { randomUUID } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { afterAll, expect } from 'vitest'
import { inTransaction } from '../../src/db/transaction.js'
import type { Db } from '../../src/db/database.js'
import type { Batch } from '../../src/db/schema.js'
import { recordEvent } from '../../src/webhooks/outbox.js'
import { batchUploadedData } from '../../src/webhooks/payloads.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import type { TestContext } from '../helpers/test-app.js'

// A webhook receiver on 127.0.0.1 for the delivery tests: it keeps every request it got and answers
// what the test tells it to (200 unless told otherwise; `hang` never answers). Receivers given one
// timeline write into it, in the order it happened, each request they got and each unanswered request
// whose connection the sender closed: tests read the order of events there instead of timing them.

export interface Received {
  path: string
  headers: IncomingHttpHeaders
  body: string
}

export type Answer = number | { status: number; body: string } | 'hang'

export interface TimelineEntry {
  receiver: Receiver
  what: 'request' | 'closed unanswered'
}

export interface Receiver {
  url: string
  received: Received[]
  /** Answers for the next requests, in order; afterwards `fallback`. */
  answers: Answer[]
  fallback: Answer
  /** Requests left unanswered (`hang`) whose connection is still open. */
  open: number
  close(): Promise<void>
}

export async function startReceiver(timeline?: TimelineEntry[]): Promise<Receiver> {
  const receiver = { received: [] as Received[], answers: [] as Answer[], fallback: 200 as Answer, open: 0 } as Receiver
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      receiver.received.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') })
      timeline?.push({ receiver, what: 'request' })
      const answer = receiver.answers.shift() ?? receiver.fallback
      if (answer === 'hang') {
        receiver.open += 1
        request.socket.once('close', () => {
          receiver.open -= 1
          timeline?.push({ receiver, what: 'closed unanswered' })
        })
        return
      }
      const { status, body } = typeof answer === 'number' ? { status: answer, body: 'ok' } : answer
      response.writeHead(status, { 'content-type': 'text/plain' }).end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  receiver.close = async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  return receiver
}

/** A batch row as an upload leaves it, for events the tests record themselves. */
export function uploadedBatch(accountId: string, id: string = randomUUID()): Batch {
  const stage = { completedAt: '2025-01-01T00:00:00+00:00', status: 'success' as const, successCount: 2, errorCount: 0, errors: [] }
  return {
    id,
    seq: '1',
    account_id: accountId,
    stream_id: '7',
    kind: 'upsert',
    status: 'uploaded',
    content_type: 'application/x-ndjson',
    upload_stage: stage,
    processing_stage: null,
    error_count: 0,
    row_count: 2,
    columns: ['id'],
    created_at: new Date(),
    applied_at: null,
    rows_released: false,
  }
}

/** Records a `batch.uploaded` event of the account in a transaction of its own; returns the event's id. */
export async function recordUpload(db: Db, accountId: string, batchId?: string): Promise<string> {
  const batch = uploadedBatch(accountId, batchId)
  return inTransaction(db, async (tx) => (await recordEvent(tx, accountId, 'batch.uploaded', batchUploadedData(batch))).id)
}

/**
 * Receivers of one test file on one shared timeline, all closed when the file ends: after the app,
 * whose workers abort the attempts that hanging receivers hold.
 */
export function useReceivers(t: Pick<TestContext, 'app'>): { timeline: TimelineEntry[]; receiver(): Promise<Receiver> } {
  const timeline: TimelineEntry[] = []
  const receivers: Receiver[] = []
  afterAll(async () => {
    await t.app.close()
    for (const r of receivers) await r.close()
  })
  return {
    timeline,
    receiver: async () => {
      const started = await startReceiver(timeline)
      receivers.push(started)
      return started
    },
  }
}

/** An event as a receiver got it, its signature verified. */
export interface SignedEvent {
  type: string
  data: Record<string, unknown>
}

/**
 * A new site whose account subscribes `receiver` to `events` through the API; `received` reads what
 * the receiver got so far, each verified with the subscription's secret.
 */
export async function subscribedSite(t: TestContext, receiver: Receiver, events: string[]): Promise<{ f: ImportFixture; received: () => SignedEvent[] }> {
  const f = await importFixture(t)
  const response = await f.platform('POST', '/webhooks', { url: receiver.url, events })
  expect(response.statusCode, response.body).toBe(201)
  const verifier = new Webhook(response.json<{ Webhooks: { secret: string }[] }>().Webhooks[0]?.secret ?? '')
  const received = () => receiver.received.map((request) => verifier.verify(request.body, request.headers as Record<string, string>) as SignedEvent)
  return { f, received }
}
