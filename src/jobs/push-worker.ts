import { counted } from '../input/text-input.js'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import type { Db } from '../db/database.js'
import {
  claimPushes,
  finishPush,
  isFileCurrent,
  recordPushAttempt,
  releasePush,
  retryPush,
  type ClaimedPush,
  type PushAttemptRecord,
} from '../exports/channel-pushes.js'
import { sendToFileServer } from '../feeds/file-server-delivery.js'
import type { DeliveryResult } from '../feeds/file-server-push.js'
import { materialiseFeedFile } from '../feeds/feed-materialiser.js'
import type { FeedStorage } from '../feeds/feed-storage.js'
import { sendFile, type SendResult } from '../feeds/http-push.js'
import type { OutboundGuard } from '../net/outbound-guard.js'
import type { CredentialBox } from '../auth/credential-box.js'
import { LeasedClaimWorker, type ClaimSource, type SendTurn } from './leased-claim-worker.js'
import { MAX_RETRY_DELAY_SECONDS, retryDelaySeconds, type RetryBackoff } from './retry-backoff.js'

/** Tries of one push, the first included. */
export const PUSH_ATTEMPTS = 3

export interface PushWorkerOptions {
  /** Pushes this process starts at once (PUSH_CONCURRENCY); 0 sends none. One unanswered for a second gives its slot back. */
  concurrency: number
  /** Pushes this process keeps open at once, slow ones included (PUSH_MAX_OPEN). */
  maxOpen: number
  /** Pushes of one account in flight at once across every process (PUSH_ACCOUNT_CONCURRENCY). */
  accountConcurrency: number
  /** Limit of one attempt (PUSH_TIMEOUT_SECONDS). */
  timeoutSeconds: number
  /** Time for all pushes of one run, from the first one's start (PUSH_BUDGET_SECONDS). */
  budgetSeconds: number
  /** The wait before the second try (PUSH_RETRY_BASE_SECONDS), doubled before each further one. */
  retryBaseSeconds: number
  /** How often the table is looked at for due pushes. */
  pollingSeconds: number
  /** Where the exported files are kept. */
  feedStorage: FeedStorage
  guard: OutboundGuard
  /** Opens file servers' sealed credentials. */
  credentials: CredentialBox
}

/** The worker's options as the operator set them; it looks for due pushes as often as for runs. */
export function pushWorkerOptions(
  config: Config,
  { feedStorage, guard, credentials }: Pick<PushWorkerOptions, 'feedStorage' | 'guard' | 'credentials'>,
): PushWorkerOptions {
  return {
    concurrency: config.PUSH_CONCURRENCY,
    maxOpen: config.PUSH_MAX_OPEN,
    accountConcurrency: config.PUSH_ACCOUNT_CONCURRENCY,
    timeoutSeconds: config.PUSH_TIMEOUT_SECONDS,
    budgetSeconds: config.PUSH_BUDGET_SECONDS,
    retryBaseSeconds: config.PUSH_RETRY_BASE_SECONDS,
    pollingSeconds: config.RUN_POLL_SECONDS,
    feedStorage,
    guard,
    credentials,
  }
}

/** The wait before a push's next try, without jitter: a push has PUSH_ATTEMPTS tries, all within its run's budget. */
export function pushBackoff(baseSeconds: number): RetryBackoff {
  return { baseSeconds, maxSeconds: MAX_RETRY_DELAY_SECONDS, jitter: 0 }
}

/**
 * Sends the files of finished exports to their http destinations, outside the run queue: a run ends
 * when its files are written. A slow or dead destination holds its own account's pushes
 * (PUSH_ACCOUNT_CONCURRENCY), and a process slot only for its first second (LeasedClaimWorker).
 */
export function createPushWorker(db: Db, options: PushWorkerOptions, log: FastifyBaseLogger): LeasedClaimWorker<ClaimedPush> {
  return new LeasedClaimWorker(new PushSender(db, options, log), options, log)
}

type FailedTry = Extract<SendResult, { ok: false }>

/** The pushes as the worker claims and sends them. */
class PushSender implements ClaimSource<ClaimedPush> {
  readonly name = 'push'

  constructor(
    private readonly db: Db,
    private readonly options: PushWorkerOptions,
    private readonly log: FastifyBaseLogger,
  ) {}

  claim(limit: number, leaseSeconds: number): Promise<ClaimedPush[]> {
    const { accountConcurrency, budgetSeconds } = this.options
    return claimPushes(this.db, { limit, leaseSeconds, accountConcurrency, budgetSeconds })
  }

  release(push: ClaimedPush): Promise<void> {
    return releasePush(this.db, push)
  }

  logFields(push: ClaimedPush): Record<string, unknown> {
    return pushFields(push)
  }

  async send(push: ClaimedPush, turn: SendTurn): Promise<void> {
    const what = `Channel ${push.channel_id}: ${push.filename} was not sent to ${push.url}`
    if (push.attempts > PUSH_ATTEMPTS) {
      const interrupted = 'its attempts were interrupted (the server sending it stopped)'
      return this.fail(push, `${what}: ${interrupted}`, interrupted)
    }
    if (push.budget_left_ms <= 0) {
      return this.fail(push, `${what}: ${this.budgetSpent()}${push.note ? ` (last attempt: ${push.note})` : ''}`, this.budgetSpent())
    }
    const replaced = `${what}: a newer export replaced the file before it could be sent (nothing to send)`
    if (!(await isFileCurrent(this.db, push))) return finishPush(this.db, push, 'skipped', replaced)
    // A full file is written on its first download or push after its export.
    await materialiseFeedFile(this.db, this.options.feedStorage, { accountId: push.account_id, storageKey: push.storage_key })
    const started = new Date()
    const result = await this.attempt(push, turn)
    if (result === undefined) return releasePush(this.db, push)
    const tried = (outcome: PushAttemptRecord['outcome']) => this.record(push, started, result, outcome)
    if (result.ok) {
      await tried('delivered')
      return finishPush(this.db, push, 'done', null)
    }
    if (result.kind === 'missing') {
      await tried('failed')
      return finishPush(this.db, push, 'skipped', result.error.includes('removed') ? `${what}: ${result.error}` : replaced)
    }
    return this.afterFailedTry(push, result, Date.now() - started.getTime(), tried)
  }

  /** Every attempt is kept: what was sent where, how long it took, and how it ended. */
  private record(push: ClaimedPush, startedAt: Date, result: DeliveryResult | SendResult, outcome: PushAttemptRecord['outcome']): Promise<void> {
    const delivered = result.ok && 'bytes' in result ? result : undefined
    const remotePath = delivered?.remotePath ?? (!result.ok && 'remotePath' in result ? (result.remotePath ?? null) : null)
    return recordPushAttempt(this.db, push, {
      startedAt,
      durationMs: Date.now() - startedAt.getTime(),
      bytes: delivered?.bytes ?? null,
      remotePath,
      outcome,
      error: result.ok ? null : result.error,
    })
  }

  /** One try, within the try's limit and what is left of the budget; undefined when it was handed back (the worker stops). */
  private async attempt(push: ClaimedPush, turn: SendTurn): Promise<DeliveryResult | SendResult | undefined> {
    const file = { storage: this.options.feedStorage, key: push.storage_key, filename: push.filename, contentType: push.content_type }
    const timeoutMs = Math.max(1, Math.min(this.options.timeoutSeconds * 1000, push.budget_left_ms))
    turn.sending()
    const { guard, credentials } = this.options
    const result =
      push.kind === 'http'
        ? await sendFile(push.url, file, { guard, timeoutMs, signal: turn.signal })
        : await sendToFileServer(this.db, { accountId: push.account_id, destinationId: push.destination_id }, file, {
            guard,
            credentials,
            timeoutMs,
            signal: turn.signal,
            uploadTag: `push-${push.id}`,
          })
    if (result.ok || result.kind !== 'aborted') return result
    // Ended early to make room for another (PUSH_MAX_OPEN): a failed try, retried like a timeout.
    const cut = turn.cutReason
    return cut === undefined ? undefined : { ok: false, kind: 'timeout', error: cut, retry: true }
  }

  /** Another try after the back-off while tries and the run's budget allow one, else the push has failed. */
  private async afterFailedTry(
    push: ClaimedPush,
    result: FailedTry,
    elapsedMs: number,
    tried: (outcome: PushAttemptRecord['outcome']) => Promise<void>,
  ): Promise<void> {
    const sending = `Channel ${push.channel_id}: sending ${push.filename} to ${push.url}`
    const attempts = counted(push.attempts, 'attempt')
    if (!result.retry || push.attempts >= PUSH_ATTEMPTS) {
      await tried('failed')
      return this.fail(push, `${sending} failed after ${attempts}: ${result.error}`, result.error)
    }
    const backoff = retryDelaySeconds(push.attempts, pushBackoff(this.options.retryBaseSeconds))
    if (push.budget_left_ms - elapsedMs <= backoff * 1000) {
      await tried('failed')
      return this.fail(push, `${sending} stopped after ${attempts}: ${this.budgetSpent()} (last attempt: ${result.error})`, result.error)
    }
    await tried('retrying')
    const next = await retryPush(this.db, push, backoff, result.error)
    if (next) this.log.warn({ ...pushFields(push), error: result.error, result: 'retrying', nextAttemptAt: next.toISOString() }, 'feed push attempt failed')
  }

  private budgetSpent(): string {
    return `the run's push budget of ${this.options.budgetSeconds} s ran out`
  }

  /** Ends a push that did not make it (a site error 2003 of its run), with a warning; `error` says why, without the destination's URL. */
  private async fail(push: ClaimedPush, message: string, error: string): Promise<void> {
    await finishPush(this.db, push, 'failed', message)
    this.log.warn({ ...pushFields(push), error, result: 'failed' }, 'feed push attempt failed')
  }
}

/**
 * Who a push's lines are about: its run's `pid` (a run's grep finds its pushes), the channel and the
 * file. Of the destination only its host: its URL may hold a token.
 */
function pushFields(push: ClaimedPush): Record<string, unknown> {
  return {
    pid: push.pid,
    account: push.account_id,
    site: push.site_id,
    channel: push.channel_id,
    push: push.id,
    filename: push.filename,
    host: URL.parse(push.url)?.host,
    attempt: push.attempts,
  }
}
