import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../db/database.js'
import { materialiseFeedFile } from '../feeds/feed-materialiser.js'
import { claimPush, finishPush, isFileCurrent, releasePush, retryPush, type ClaimedPush } from '../exports/channel-pushes.js'
import type { FeedStorage } from '../feeds/feed-storage.js'
import { sendFile } from '../feeds/http-push.js'
import type { OutboundGuard } from '../net/outbound-guard.js'
import { CoalescedWakes } from '../net/coalesced-wakes.js'
import { SendSlots, type SendSlot } from '../net/send-slots.js'

/** Tries of one push, the first included. */
export const PUSH_ATTEMPTS = 3
/** Wait before the second try; doubled before each further one. */
const BACKOFF_SECONDS = 2
/** The lease outlasts an attempt (bounded by the timeout) by this much before others may take it. */
const LEASE_MARGIN_SECONDS = 30

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
  /** How often the table is looked at for due pushes. */
  pollingSeconds: number
  /** Where the exported files are kept. */
  feedStorage: FeedStorage
  guard: OutboundGuard
}

/**
 * Sends the files of finished exports to their http destinations, outside the run queue: a run
 * ends when its files are written. A slow or dead destination holds its own account's pushes
 * (PUSH_ACCOUNT_CONCURRENCY), and a process slot only for its first second: then the slot goes to
 * the next due push (SendSlots), so destinations that hang, on however many accounts, never hold
 * another account's back. Pushes are rows in Postgres, so any process sends any of them, and one
 * whose process died is taken again when its lease runs out.
 */
export class PushWorker {
  private readonly inFlight = new Set<Promise<void>>()
  private timer: NodeJS.Timeout | undefined
  private stopped = false
  private readonly wakes = new CoalescedWakes(
    () => this.fill(),
    (error) => this.log.warn({ err: error }, 'push claim failed'),
  )
  private readonly slots: SendSlots

  constructor(
    private readonly db: Db,
    private readonly options: PushWorkerOptions,
    private readonly log: FastifyBaseLogger,
  ) {
    this.slots = new SendSlots({ concurrency: options.concurrency, maxOpen: options.maxOpen, onFree: () => this.wake() })
  }

  start(): void {
    if (this.options.concurrency === 0 || this.stopped) return
    this.timer = setInterval(() => this.wake(), this.options.pollingSeconds * 1000)
    this.timer.unref()
    this.wake()
  }

  /** Looks for due pushes now; calls while a look is under way make it look once more. */
  wake(): void {
    this.wakes.wake()
  }

  /** Aborts the requests in flight and hands their pushes back, so that shutdown does not wait on remote servers. */
  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    this.slots.abortAll()
    await this.wakes.stop()
    await Promise.allSettled([...this.inFlight])
  }

  private async fill(): Promise<void> {
    while (!this.stopped && this.slots.free > 0) {
      const push = await claimPush(this.db, {
        leaseSeconds: this.options.timeoutSeconds + LEASE_MARGIN_SECONDS,
        accountConcurrency: this.options.accountConcurrency,
        budgetSeconds: this.options.budgetSeconds,
      })
      if (!push) return
      if (this.stopped) {
        await releasePush(this.db, push)
        return
      }
      const slot = this.slots.take()
      const task: Promise<void> = this.send(push, slot)
        .catch((error: unknown) => this.log.warn({ err: error, push: push.id }, 'push failed unexpectedly; it is taken again when its lease ends'))
        .finally(() => {
          this.slots.release(slot)
          this.inFlight.delete(task)
          this.wake()
        })
      this.inFlight.add(task)
    }
  }

  private async send(push: ClaimedPush, slot: SendSlot): Promise<void> {
    const channel = `Channel ${push.channel_id}`
    const what = `${channel}: ${push.filename}`
    const budget = `the run's push budget of ${this.options.budgetSeconds} s ran out`
    if (push.attempts > PUSH_ATTEMPTS) {
      const interrupted = 'its attempts were interrupted (the server sending it stopped)'
      return this.fail(push, `${what} was not sent to ${push.url}: ${interrupted}`, interrupted)
    }
    if (push.budget_left_ms <= 0) {
      return this.fail(push, `${what} was not sent to ${push.url}: ${budget}${push.note ? ` (last attempt: ${push.note})` : ''}`, budget)
    }
    const replaced = `${what} was not sent to ${push.url}: a newer export replaced the file before it could be sent (nothing to send)`
    if (!(await isFileCurrent(this.db, push))) {
      await finishPush(this.db, push, 'skipped', replaced)
      return
    }
    // A full file is written on its first download or push after its export.
    await materialiseFeedFile(this.db, this.options.feedStorage, { accountId: push.account_id, storageKey: push.storage_key })
    const started = Date.now()
    const file = { storage: this.options.feedStorage, key: push.storage_key, filename: push.filename, contentType: push.content_type }
    const timeoutMs = Math.max(1, Math.min(this.options.timeoutSeconds * 1000, push.budget_left_ms))
    this.slots.sending(slot)
    let result = await sendFile(push.url, file, { guard: this.options.guard, timeoutMs, signal: slot.signal })
    if (result.ok) return finishPush(this.db, push, 'done', null)
    if (result.kind === 'aborted' && (this.stopped || slot.cutReason === undefined)) return releasePush(this.db, push)
    // Ended early to make room for another (PUSH_MAX_OPEN): a failed try, retried like a timeout.
    if (result.kind === 'aborted') result = { ok: false, kind: 'timeout', error: slot.cutReason ?? 'ended early', retry: true }
    if (result.kind === 'missing') return finishPush(this.db, push, 'skipped', replaced)
    const attempts = `${push.attempts} attempt${push.attempts === 1 ? '' : 's'}`
    if (!result.retry || push.attempts >= PUSH_ATTEMPTS) {
      return this.fail(push, `${channel}: sending ${push.filename} to ${push.url} failed after ${attempts}: ${result.error}`, result.error)
    }
    const backoff = BACKOFF_SECONDS * 2 ** (push.attempts - 1)
    if (push.budget_left_ms - (Date.now() - started) <= backoff * 1000) {
      const stopped = `${channel}: sending ${push.filename} to ${push.url} stopped after ${attempts}: ${budget} (last attempt: ${result.error})`
      return this.fail(push, stopped, result.error)
    }
    const next = await retryPush(this.db, push, backoff, result.error)
    if (next) this.log.warn({ ...pushFields(push), error: result.error, result: 'retrying', nextAttemptAt: next.toISOString() }, 'feed push attempt failed')
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
