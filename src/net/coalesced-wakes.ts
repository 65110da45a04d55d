/**
 * A look for work that callers may ask for at any time (a timer, a commit that queued something):
 * one look runs at a time, and wakes that come while it runs make it look once more afterwards, not
 * once per wake. Used by the workers that claim outbound sends from Postgres (feed pushes, webhook
 * deliveries). Failures of a look go to `onError` (a log line); the next wake tries again.
 */
export class CoalescedWakes {
  private running: Promise<void> | undefined
  private again = false
  private stopped = false

  constructor(
    private readonly look: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  wake(): void {
    if (this.stopped) return
    if (this.running) {
      this.again = true
      return
    }
    this.running = this.look()
      .catch(this.onError)
      .finally(() => {
        this.running = undefined
        if (this.again) {
          this.again = false
          this.wake()
        }
      })
  }

  /** No look starts from here; waits for the one under way. */
  async stop(): Promise<void> {
    this.stopped = true
    await this.running
  }
}
