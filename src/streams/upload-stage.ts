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
    this.errors.set(message, { message, occurrences: 1, example: { lineNumber, value: exampleValue(rawLine) } })
  }

  countOf(message: string): number {
    return this.errors.get(message)?.occurrences ?? 0
  }

  /** The errors grouped by message, in the order their messages were first met. */
  get groups(): StageError[] {
    return [...this.errors.values()]
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
      errors: this.groups,
    }
  }
}

/**
 * A refused line as the stage stores it (jsonb): cut to EXAMPLE_CHARS, never between the two halves
 * of a surrogate pair, and with what jsonb cannot hold (NUL, an unpaired surrogate) shown as U+FFFD.
 * A refused line may hold anything, and one unstorable example would fail the whole upload.
 */
export function exampleValue(rawLine: string): string {
  let value = rawLine
  if (rawLine.length > EXAMPLE_CHARS) {
    const end = isHighSurrogate(rawLine.charCodeAt(EXAMPLE_CHARS - 1)) ? EXAMPLE_CHARS - 1 : EXAMPLE_CHARS
    value = `${rawLine.slice(0, end)}…`
  }
  // Any surrogate unit is checked (cheaply) first; only the u-flag pattern tells paired from lone.
  return /[\0\uD800-\uDFFF]/.test(value) ? value.replace(/\0|\p{Cs}/gu, '\uFFFD') : value
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}

/** ISO 8601 with offset and no fraction, as stream clients expect: 2021-12-21T21:12:21+00:00. */
export function isoSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}+00:00`
}
