import { Readable } from 'node:stream'
import type { CredentialBox } from '../auth/credential-box.js'
import type { DbHandle } from '../db/database.js'
import { isId } from '../db/ids.js'
import { BadRequestError, NotFoundError, TooManyRequestsError } from '../errors.js'
import { sendToFileServer } from '../feeds/file-server-delivery.js'
import type { DeliveryResult } from '../feeds/file-server-push.js'
import type { OutboundGuard } from '../net/outbound-guard.js'
import type { Channel, Site } from '../db/schema.js'
import { getSite } from '../sites/sites.js'
import { getChannel, type ChannelDetails } from './channels.js'

// What a person asks of a channel's file server destinations: a test that does what a
// delivery does with a small file, then removes it; and every attempt of the channel's deliveries.

export interface DestinationTest {
  destinationId: string
  ok: boolean
  /** Where the test file was written (and removed from). */
  remotePath: string | null
  durationMs: number
  /** Why it failed, in the service's words (never the server's text beyond a status code). */
  error: string | null
}

const PROBE = Buffer.from('catalog-platform destination test\n')

// A test holds an outbound connection up to PUSH_TIMEOUT_SECONDS: an account runs at most this many
// at once in a process, so that a page of Test clicks against a silent server holds no more.
const TESTS_PER_ACCOUNT = 2
const testsRunning = new Map<string, number>()

/** Connects, checks the host key or certificate, writes and removes a small file; answers what happened. */
export async function testDestination(
  db: DbHandle,
  target: { accountId: string; siteSegment: string; channelId: string; destinationId: string },
  options: { guard: OutboundGuard; credentials: CredentialBox; timeoutMs: number },
): Promise<DestinationTest> {
  const { channel, destinations } = await getChannel(db, target.accountId, target.siteSegment, target.channelId)
  const destination = isId(target.destinationId) ? destinations.find((d) => d.id === target.destinationId) : undefined
  if (!destination) throw new NotFoundError(`Channel ${channel.id} has no destination ${target.destinationId.slice(0, 64)}`)
  if (destination.kind !== 'sftp' && destination.kind !== 'ftps') {
    throw new BadRequestError(`Destination ${destination.id} is of type ${destination.kind}: only sftp and ftps destinations are tested`)
  }
  const file = {
    storage: { open: async () => ({ size: PROBE.length, stream: () => Readable.from([PROBE]), close: async () => {} }) },
    key: 'probe',
    filename: `.catalog-platform-test-${Date.now().toString(36)}.txt`,
    contentType: 'text/plain',
  }
  const running = testsRunning.get(target.accountId) ?? 0
  if (running >= TESTS_PER_ACCOUNT) {
    throw new TooManyRequestsError(5, `This account already has ${running} destination tests running, the most it may have at once; retry when one has ended`)
  }
  testsRunning.set(target.accountId, running + 1)
  const started = Date.now()
  let result: DeliveryResult
  try {
    result = await sendToFileServer(db, { accountId: target.accountId, destinationId: destination.id }, file, { ...options, removeAfter: true })
  } finally {
    const left = (testsRunning.get(target.accountId) ?? 1) - 1
    if (left === 0) testsRunning.delete(target.accountId)
    else testsRunning.set(target.accountId, left)
  }
  return {
    destinationId: destination.id,
    ok: result.ok,
    remotePath: result.ok ? result.remotePath : (result.remotePath ?? null),
    durationMs: Date.now() - started,
    error: result.ok ? null : result.error,
  }
}

export interface DeliveryAttempt {
  id: string
  pushId: string
  attempt: number
  filename: string
  destination: string
  startedAt: Date
  durationMs: number
  bytes: number | null
  remotePath: string | null
  outcome: string
  error: string | null
}

/** The channel's delivery attempts, newest first. */
export async function listDeliveryAttempts(
  db: DbHandle,
  target: { accountId: string; siteSegment: string; channelId: string },
  page: { limit: number; offset: number },
): Promise<DeliveryAttempt[]> {
  const { channel } = await getChannel(db, target.accountId, target.siteSegment, target.channelId)
  return attemptsOfChannel(db, channel, page)
}

/** The channel's site and details with one page of its delivery attempts: what its deliveries page shows, the site resolved once. */
export async function channelDeliveries(
  db: DbHandle,
  target: { accountId: string; siteSegment: string; channelId: string },
  page: { limit: number; offset: number },
): Promise<{ site: Site; details: ChannelDetails; attempts: DeliveryAttempt[] }> {
  const site = await getSite(db, target.accountId, target.siteSegment)
  const details = await getChannel(db, target.accountId, site.id, target.channelId)
  return { site, details, attempts: await attemptsOfChannel(db, details.channel, page) }
}

/** One page of a channel's delivery attempts, the newest first. */
async function attemptsOfChannel(db: DbHandle, channel: Channel, page: { limit: number; offset: number }): Promise<DeliveryAttempt[]> {
  const rows = await db
    .selectFrom('push_attempt as a')
    .innerJoin('channel_push as p', 'p.id', 'a.push_id')
    .select(['a.id', 'a.push_id', 'a.attempt', 'p.filename', 'p.url', 'a.started_at', 'a.duration_ms', 'a.bytes', 'a.remote_path', 'a.outcome', 'a.error'])
    .where('a.account_id', '=', channel.account_id)
    .where('a.channel_id', '=', channel.id)
    .orderBy('a.id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute()
  return rows.map((row) => ({
    id: row.id,
    pushId: row.push_id,
    attempt: row.attempt,
    filename: row.filename,
    destination: row.url,
    startedAt: row.started_at,
    durationMs: row.duration_ms,
    bytes: row.bytes === null ? null : Number(row.bytes),
    remotePath: row.remote_path,
    outcome: row.outcome,
    error: row.error,
  }))
}
