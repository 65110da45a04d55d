import type { FastifyInstance } from 'fastify'
import { afterAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createDb, type Db } from '../../src/db/database.js'
import { client, type Client } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'
import { useTestApp } from '../helpers/test-app.js'
import { purgeWebhookHistory } from '../../src/webhooks/webhook-upkeep.js'
import { sql } from 'kysely'
import { recordUpload, startReceiver, type Receiver, type TimelineEntry } from './receiver.js'

// The outbox outlives the process that wrote it: an event recorded by one server is delivered by
// another that starts later on the same database, and several servers on one database deliver each
// event once. The test app itself sends nothing (WEBHOOK_CONCURRENCY 0): the "servers" here are
// further apps, each with a pool of its own, as separate processes would have.

const SETTINGS = { ALLOW_PRIVATE_DESTINATIONS: 'true', WEBHOOK_ALLOW_HTTP: 'true', SCHEDULER_INTERVAL_SECONDS: '0', RUN_CONCURRENCY: '0' }
const t = useTestApp({ ...SETTINGS, WEBHOOK_CONCURRENCY: '0' })

interface Server {
  app: FastifyInstance
  db: Db
}
const servers = new Set<Server>()
const receivers: Receiver[] = []

async function startServer(env: Record<string, string> = {}): Promise<Server> {
  const db = createDb(t.database.url, 10)
  const config = loadConfig({ LOG_LEVEL: 'silent', ...SETTINGS, WEBHOOK_POLL_SECONDS: '0.2', WEBHOOK_RETRY_BASE_SECONDS: '0.2', ...env })
  const app = await buildApp({ db, config, logger: false })
  await app.ready()
  const server = { app, db }
  servers.add(server)
  return server
}

async function stopServer(server: Server): Promise<void> {
  servers.delete(server)
  await server.app.close()
  await server.db.destroy()
}

afterAll(async () => {
  for (const server of [...servers]) await stopServer(server)
  for (const r of receivers) await r.close()
})

async function subscribedReceiver(c: Client, timeline?: TimelineEntry[]): Promise<{ receiver: Receiver; webhookId: string }> {
  const receiver = await startReceiver(timeline)
  receivers.push(receiver)
  const response = await c.post('/webhooks', { url: receiver.url })
  expect(response.statusCode, response.body).toBe(201)
  return { receiver, webhookId: response.json<{ Webhooks: { id: string }[] }>().Webhooks[0]?.id ?? '' }
}

async function deliveryStates(webhookId: string): Promise<{ status: string; attempts: number }[]> {
  return t.db.selectFrom('webhook_delivery').select(['status', 'attempts']).where('webhook_id', '=', webhookId).orderBy('id').execute()
}

/**
 * Records one more event of the account on `server` and waits until the receiver has it. Deliveries
 * are claimed in the order they fell due, so by then the servers have sent whatever was due before
 * it: a delivery sent twice has arrived by now. Returns the event's id.
 */
async function deliverOneMore(server: Server, accountId: string, receiver: Receiver): Promise<string> {
  const eventId = await recordUpload(server.db, accountId)
  await eventually(async () => receiver.received.some((request) => request.headers['webhook-id'] === eventId), `the delivery of event ${eventId}`)
  return eventId
}

const idsReceived = (receiver: Receiver) => receiver.received.map((request) => request.headers['webhook-id'])

describe('the outbox', () => {
  it('delivers an event recorded before a restart, once the next server is up', async () => {
    const c = await client(t)
    const { receiver, webhookId } = await subscribedReceiver(c)
    // The first server has no delivery worker running: it records and stops before anything is sent.
    const first = await startServer({ WEBHOOK_CONCURRENCY: '0' })
    const eventId = await recordUpload(first.db, c.account.accountId)
    await stopServer(first)
    expect(await deliveryStates(webhookId)).toEqual([{ status: 'pending', attempts: 0 }])

    const second = await startServer()
    await eventually(async () => (await deliveryStates(webhookId))[0]?.status === 'delivered', 'the delivery after the restart')
    // Checked once the second server has also delivered an event recorded after it started: the
    // event from before the restart was sent once, and before the later one.
    const later = await deliverOneMore(second, c.account.accountId, receiver)
    expect(idsReceived(receiver)).toEqual([eventId, later])
    expect((await deliveryStates(webhookId))[0]).toEqual({ status: 'delivered', attempts: 1 })
    await stopServer(second)
  })

  it('hands an attempt cut off by a shutdown back, and the next server sends it again with the same webhook-id', async () => {
    const c = await client(t)
    const { receiver, webhookId } = await subscribedReceiver(c)
    receiver.fallback = 'hang'
    const first = await startServer()
    const eventId = await recordUpload(first.db, c.account.accountId)
    await eventually(async () => receiver.received[0], 'the attempt that hangs')
    // A shutdown does not wait on the receiver: the attempt is aborted and handed back uncounted. Had
    // it waited until the attempt timed out (WEBHOOK_TIMEOUT_SECONDS), that attempt would count.
    await stopServer(first)
    expect(await deliveryStates(webhookId)).toEqual([{ status: 'pending', attempts: 0 }])

    receiver.fallback = 200
    const second = await startServer()
    await eventually(async () => (await deliveryStates(webhookId))[0]?.status === 'delivered', 'the delivery after the restart')
    expect(idsReceived(receiver)).toEqual([eventId, eventId])
    expect(await deliveryStates(webhookId)).toEqual([{ status: 'delivered', attempts: 1 }])
    await stopServer(second)
  })

  it('is delivered once per event when several servers share the database', async () => {
    const accounts = [await client(t, 'A'), await client(t, 'B')]
    const subscriptions = await Promise.all(accounts.map((c) => subscribedReceiver(c)))
    const running = [await startServer({ WEBHOOK_CONCURRENCY: '3' }), await startServer({ WEBHOOK_CONCURRENCY: '3' }), await startServer()]
    const recorded: string[][] = [[], []]
    for (let i = 0; i < 15; i++) {
      for (const [n, c] of accounts.entries()) recorded[n]?.push(await recordUpload(running[i % running.length]?.db ?? t.db, c.account.accountId))
    }
    for (const [n, { receiver }] of subscriptions.entries()) {
      await eventually(async () => receiver.received.length >= 15, `the 15 events of account ${n}`)
    }
    // One more event of each account, recorded now and delivered after every one of the 15 was due:
    // any of them sent twice has arrived by the time it has.
    for (const [n, { receiver }] of subscriptions.entries()) {
      const server = running[n] ?? running[0]
      if (server) recorded[n]?.push(await deliverOneMore(server, accounts[n]?.account.accountId ?? '', receiver))
    }
    for (const [n, { receiver }] of subscriptions.entries()) {
      expect(idsReceived(receiver).sort()).toEqual([...(recorded[n] ?? [])].sort())
    }
    for (const server of running) await stopServer(server)
  })

  it('fails what an inactive webhook left pending past its window, and forgets ended deliveries after a week', async () => {
    const c = await client(t)
    const { webhookId } = await subscribedReceiver(c)
    const stale = await recordUpload(t.db, c.account.accountId)
    const old = await recordUpload(t.db, c.account.accountId)
    expect((await c.put(`/webhooks/${webhookId}`, { active: false })).statusCode).toBe(200)
    await sql`UPDATE webhook_delivery SET created_at = now() - interval '2 days' WHERE event_id = ${stale}`.execute(t.db)
    await t.db
      .updateTable('webhook_delivery')
      .set({ status: 'delivered', next_attempt_at: null, finished_at: sql<Date>`now() - interval '8 days'` })
      .where('event_id', '=', old)
      .execute()
    await sql`UPDATE webhook_event SET created_at = now() - interval '8 days' WHERE id = ${old}`.execute(t.db)
    const purged = await purgeWebhookHistory(t.db, 24 * 3600)
    expect(purged).toMatchObject({ expired: 1, deliveries: 1, events: 1 })
    const left = await t.db.selectFrom('webhook_delivery').select(['event_id', 'status', 'last_error']).where('webhook_id', '=', webhookId).execute()
    expect(left).toEqual([{ event_id: stale, status: 'failed', last_error: expect.stringMatching(/^not delivered within its retry window/) }])
    expect(await t.db.selectFrom('webhook_event').select('id').where('id', '=', old).execute()).toEqual([])
  })
})
