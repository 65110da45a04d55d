export interface SlotPolicy {
  /** Connections of this process for this kind of work. */
  total: number
  /** Slots one account may hold at once, however many are free. */
  perAccount: number
  /** Requests of one account that may wait beyond those it holds; 0: none wait for the account's turn. */
  queuePerAccount: number
}

/**
 * A request over its account's share: `inFlight` counts the account's holding and waiting requests.
 * The db layer only says so; the caller answers the client (which status, which words, when to retry).
 */
export class SlotsFullError extends Error {
  constructor(readonly inFlight: number) {
    super(`The account already has ${inFlight} requests holding or waiting for a connection slot`)
    this.name = 'SlotsFullError'
  }
}

interface Waiter {
  order: number
  grant: () => void
}

interface AccountShare {
  holding: number
  waiting: Waiter[]
}

/**
 * Database connections for one kind of long request (uploads, product reads), shared fairly. Such
 * a request holds a connection for as long as it takes, so they alone could fill the pool and make
 * every other request wait. They get at most `total` connections of this process, so the rest of the
 * pool always serves everything else; one account holds at most `perAccount` of them; and a freed
 * slot goes to the waiting account that holds the fewest (the longest waiting among equals), so an
 * account with a long queue cannot make another account's single request wait behind it.
 */
export class ConnectionSlots {
  private active = 0
  private order = 0
  private readonly accounts = new Map<string, AccountShare>()

  constructor(private readonly policy: SlotPolicy) {}

  /**
   * Takes a slot for `accountId`, waiting for its turn while `signal` allows; resolves to the
   * function that gives it back (call it once the work's connection is released). Throws a
   * SlotsFullError, waiting for nothing, when the account already has its share holding and waiting.
   */
  async acquire(accountId: string, signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) throw signal.reason as Error
    const share = this.shareOf(accountId)
    const inFlight = share.holding + share.waiting.length
    if (inFlight >= this.policy.perAccount + this.policy.queuePerAccount) {
      this.forgetIfIdle(accountId, share)
      throw new SlotsFullError(inFlight)
    }
    await this.turn(accountId, share, signal)
    let released = false
    return () => {
      if (released) return
      released = true
      share.holding--
      this.active--
      this.forgetIfIdle(accountId, share)
      this.dispatch()
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
    let waiting = 0
    for (const share of this.accounts.values()) waiting += share.waiting.length
    return { size: this.policy.total, busy: this.active, waiting }
  }

  private turn(accountId: string, share: AccountShare, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        order: this.order++,
        grant: () => {
          signal.removeEventListener('abort', onAbort)
          resolve()
        },
      }
      const onAbort = () => {
        const index = share.waiting.indexOf(waiter)
        if (index === -1) return
        share.waiting.splice(index, 1)
        this.forgetIfIdle(accountId, share)
        reject(signal.reason as Error)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      share.waiting.push(waiter)
      this.dispatch()
    })
  }

  /** Hands free slots to the waiting accounts, the one holding the fewest first. */
  private dispatch(): void {
    while (this.active < this.policy.total) {
      const next = this.nextInTurn()
      if (!next) return
      const waiter = next.waiting.shift()!
      next.holding++
      this.active++
      waiter.grant()
    }
  }

  private nextInTurn(): AccountShare | undefined {
    let best: AccountShare | undefined
    for (const share of this.accounts.values()) {
      const head = share.waiting[0]
      if (!head || share.holding >= this.policy.perAccount) continue
      if (!best || share.holding < best.holding || (share.holding === best.holding && head.order < best.waiting[0]!.order)) best = share
    }
    return best
  }

  private shareOf(accountId: string): AccountShare {
    let share = this.accounts.get(accountId)
    if (!share) {
      share = { holding: 0, waiting: [] }
      this.accounts.set(accountId, share)
    }
    return share
  }

  // Accounts with nothing held or waiting are dropped, so that the map holds only current work.
  private forgetIfIdle(accountId: string, share: AccountShare): void {
    if (share.holding === 0 && share.waiting.length === 0) this.accounts.delete(accountId)
  }
}
