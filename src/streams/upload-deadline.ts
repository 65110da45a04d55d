import { performance } from 'node:perf_hooks'
import { sql } from 'kysely'
import { QUERY_CANCELED, type DbHandle } from '../db/database.js'
import { AppError, RequestTimeoutError } from '../errors.js'

// SQLSTATE of a lock wait ended by lock_timeout (QUERY_CANCELED: by statement_timeout or a cancel).
const LOCK_NOT_AVAILABLE = '55P03'

/**
 * The time limit of one write request (STREAM_REQUEST_TIMEOUT_MS) as its work sees it: the signal
 * aborts at the deadline or when the client goes away, Postgres is told to give up waiting (for a
 * lock, or a statement) when the time is up, and the answer comes at the deadline even while the
 * work still waits for the pool. Past its commit point the work is no longer cut short, so an
 * answer of 503 always means nothing was committed.
 */
export class UploadDeadline {
  private committing = false

  private constructor(
    readonly signal: AbortSignal,
    readonly timeoutMs: number,
    /** performance.now() at which the time is up. */
    private readonly expiresAt: number,
  ) {}

  /** `elapsedMs`: how long the request has run already (its deadline was armed when it arrived). */
  static of(signal: AbortSignal, timeoutMs: number, elapsedMs: number): UploadDeadline {
    return new UploadDeadline(signal, timeoutMs, performance.now() - elapsedMs + timeoutMs)
  }

  /** Why the work stops: the request's time is up (503), or the client is gone. */
  get reason(): AppError {
    const reason: unknown = this.signal.reason
    return reason instanceof AppError ? reason : new RequestTimeoutError(this.timeoutMs)
  }

  throwIfAborted(): void {
    if (this.signal.aborted) throw this.reason
  }

  /**
   * The first statement of the work's transaction: Postgres stops waiting for a lock, and stops any
   * statement, once the request's time is up (rounded up, at least 1 ms), and the transaction ends.
   */
  async limit(db: DbHandle): Promise<void> {
    this.throwIfAborted()
    const remaining = `${Math.max(1, Math.ceil(this.expiresAt - performance.now()))}ms`
    await sql`SELECT set_config('statement_timeout', ${remaining}, true), set_config('lock_timeout', ${remaining}, true)`.execute(db)
  }

  /** Called last before the commit: throws if the time is up; after it, the deadline no longer cuts in. */
  commitPoint(): void {
    this.throwIfAborted()
    this.committing = true
  }

  /**
   * Runs the work and answers with its outcome, or with the deadline's error as soon as the signal
   * aborts before the commit point. The work then carries on alone, only to roll back: it fails at
   * its next check (body, limit, commit point) or at Postgres' own timeout.
   */
  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.signal.aborted) return Promise.reject(this.reason)
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        if (!this.committing) reject(this.reason)
      }
      this.signal.addEventListener('abort', onAbort, { once: true })
      work().then(
        (value) => {
          this.signal.removeEventListener('abort', onAbort)
          resolve(value)
        },
        (error: unknown) => {
          this.signal.removeEventListener('abort', onAbort)
          reject(this.translate(error))
        },
      )
    })
  }

  /** Postgres cancelling a statement at the limits set by `limit` is the same timeout. */
  private translate(error: unknown): unknown {
    const code = (error as { code?: unknown } | null)?.code
    // A cancel before the deadline came from elsewhere (an operator): it stays what it is.
    const timedOut = code === LOCK_NOT_AVAILABLE || (code === QUERY_CANCELED && performance.now() >= this.expiresAt - 1)
    if (!timedOut) return error
    return this.signal.aborted ? this.reason : new RequestTimeoutError(this.timeoutMs)
  }
}
