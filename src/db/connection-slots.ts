import { TooManyRequestsError } from '../errors.js'

/** What the slots are for, as their 429 names it: `uploads`, `UPLOADS_PER_ACCOUNT`. */
export interface SlotKind {
  noun: string
  variable: string
}

/**
 * Database connections for one kind of long request (uploads, product reads), shared fairly. Such
 * a request holds a connection for as long as it takes (an upload while its body arrives), so they
 * alone could fill the pool and make every other request wait. They get at most `total`
 * connections of this process, so the rest of the pool always serves everything else; and one
 * account has at most `perAccount` of them in flight (running or waiting for a slot), so one
 * tenant cannot take every slot: above that, 429 with Retry-After.
 */
export class ConnectionSlots {
  private active = 0
  private readonly waiting: { grant: () => void }[] = []
  private readonly perAccountInFlight = new Map<string, number>()

  constructor(
    readonly total: number,
    readonly perAccount: number,
    private readonly kind: SlotKind,
  ) {}

  /**
   * Takes a slot for `accountId`, waiting for one while `signal` allows; resolves to the function
   * that gives it back (call it once the work's connection is released).
   */
  async acquire(accountId: string, signal: AbortSignal): Promise<() => void> {
    const inFlight = this.perAccountInFlight.get(accountId) ?? 0
    if (inFlight >= this.perAccount) {
      const { noun, variable } = this.kind
      throw new TooManyRequestsError(
        1,
        `This account already has ${inFlight} ${noun} in progress, the most it may have at once (${variable}); retry when one has finished`,
      )
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

  /** Runs `work` holding a slot of `accountId`, given back when the work has ended. */
  async run<T>(accountId: string, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    const release = await this.acquire(accountId, signal)
    try {
      return await work()
    } finally {
      release()
    }
  }

  /** Slots in use and requests waiting for one, for the health check. */
  get usage(): { size: number; busy: number; waiting: number } {
    return { size: this.total, busy: this.active, waiting: this.waiting.length }
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
