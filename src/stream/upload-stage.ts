import type { BatchStage, StageError } from '../db/schema.js'

const EXAMPLE_CHARS = 1000

/** Collects a stage's outcome: counts, and errors grouped by message with the first example. */
export class StageCollector {
  successCount = 0
  errorCount = 0
  private readonly errors = new Map<string, StageError>()

  success(): void {
    this.successCount++
  }

  error(message: string, lineNumber: number, rawLine: string): void {
    this.errorCount++
    const known = this.errors.get(message)
    if (known) {
      known.occurrences++
      return
    }
    const value = rawLine.length > EXAMPLE_CHARS ? `${rawLine.slice(0, EXAMPLE_CHARS)}…` : rawLine
    this.errors.set(message, { message, occurrences: 1, example: { lineNumber, value } })
  }

  countOf(message: string): number {
    return this.errors.get(message)?.occurrences ?? 0
  }

  get total(): number {
    return this.successCount + this.errorCount
  }

  stage(completedAt: Date): BatchStage {
    const status = this.errorCount === 0 ? 'success' : this.successCount === 0 ? 'failure' : 'warning'
    return {
      completedAt: isoSeconds(completedAt),
      status,
      successCount: this.successCount,
      errorCount: this.errorCount,
      errors: [...this.errors.values()],
    }
  }
}

/** ISO 8601 with offset and no fraction, as stream clients expect: 2021-12-21T21:12:21+00:00. */
export function isoSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}+00:00`
}
