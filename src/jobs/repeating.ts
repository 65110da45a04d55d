/**
 * A task run every `everyMs` in the background of this process (the scheduler, the stale-run sweep,
 * the hourly cleanup). A run that outlasts the interval is not joined by another: the task's own
 * work would meet itself. Its failures go to `onError` (a log line); the next round tries again.
 * The timer does not keep the process alive; `stop` waits for a round under way.
 */
export class Repeating {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private stopped = false

  constructor(
    private readonly everyMs: number,
    private readonly task: () => Promise<unknown>,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    if (this.timer || this.stopped) return
    this.timer = setInterval(() => this.round(), this.everyMs)
    this.timer.unref()
  }

  private round(): void {
    if (this.running || this.stopped) return
    this.running = this.task()
      .then(
        () => {},
        (error: unknown) => this.onError(error),
      )
      .finally(() => {
        this.running = undefined
      })
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    await this.running
  }
}
