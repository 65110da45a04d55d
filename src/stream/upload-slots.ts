import { TooManyRequestsError } from '../errors.js'

/**
 * Database connections for uploads, shared fairly. An upload holds a connection (its transaction)
 * for as long as its body takes to arrive, so uploads alone could fill the pool and make every
 * other request wait. They get at most `total` connections of this process, so the rest of the
 * pool always serves everything else; and one account has at most `perAccount` uploads in flight
 * (running or waiting for a slot), so one tenant's uploads, however slow, cannot take every slot:
 * above that, 429 with Retry-After.
 */
export class UploadSlots {
  private active = 0
  private readonly waiting: { grant: () => void }[] = []
  private readonly perAccountInFlight = new Map<string, number>()

  constructor(
    readonly total: number,
    readonly perAccount: number,
  ) {}

  /**
   * Takes a slot for an upload of `accountId`, waiting for one while `signal` allows; resolves to
   * the function that gives it back (call it once the upload's transaction has ended).
   */
  async acquire(accountId: string, signal: AbortSignal): Promise<() => void> {
    const inFlight = this.perAccountInFlight.get(accountId) ?? 0
    if (inFlight >= this.perAccount) {
      throw new TooManyRequestsError(1, `This account already has ${inFlight} uploads in progress, the most it may have at once (UPLOADS_PER_ACCOUNT); retry when one has finished`)
    }
    this.perAccountInFlight.set(accountId, inFlight + 1)
    try {
      await this.slot(signal)
    } catch (error) {
      this.leave(accountId)
      throw error
    }
    let released = false
    return () => {
      if (released) return
      released = true
      this.leave(accountId)
      const next = this.waiting.shift()
      if (next) next.grant()
      else this.active--
    }
  }

  /** Uploads running and waiting, for the health check. */
  get usage(): { active: number; waiting: number; total: number } {
    return { active: this.active, waiting: this.waiting.length, total: this.total }
  }

  private slot(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason as Error)
    if (this.active < this.total) {
      this.active++
      return Promise.resolve()
    }
    // A released slot passes straight to the first waiter: `active` stays as it is.
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort)
          resolve()
        },
      }
      const onAbort = () => {
        const index = this.waiting.indexOf(waiter)
        if (index !== -1) this.waiting.splice(index, 1)
        reject(signal.reason as Error)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.waiting.push(waiter)
    })
  }

  private leave(accountId: string): void {
    const left = (this.perAccountInFlight.get(accountId) ?? 1) - 1
    if (left <= 0) this.perAccountInFlight.delete(accountId)
    else this.perAccountInFlight.set(accountId, left)
  }
}
