// Texts of records (a line of NDJSON or a CSV file, an element of a JSON array) as their parts arrive,
// bounded, for the stream's referenced payloads and the sources' files alike.

// What is kept of a refused record for its excerpt (stored cut to 1,000 characters).
export const HEAD_CHARS = 1000

/** A record's text, or its head when it is past the size limit. */
export type BoundedText = { text: string } | { head: string }

/**
 * The text of one record as its parts arrive, bounded: once it passes `maxBytes` (counted in UTF-16
 * units first, each at least one UTF-8 byte) only its first HEAD_CHARS are kept, so a huge record
 * costs no memory and the rest of the file goes on.
 */
export class BoundedParts {
  private parts: string[] = []
  private units = 0
  private over = false

  constructor(private readonly maxBytes: number) {}

  get empty(): boolean {
    return this.units === 0
  }

  append(part: string): void {
    if (part === '') return
    this.units += part.length
    if (this.over) return
    if (this.units > this.maxBytes) {
      this.over = true
      this.parts = [(this.parts.join('') + part.slice(0, HEAD_CHARS)).slice(0, HEAD_CHARS)]
      return
    }
    this.parts.push(part)
  }

  /** The record so far, measured in bytes; starts the next one. */
  take(): BoundedText {
    const text = this.parts.join('')
    const over = this.over
    this.parts = []
    this.units = 0
    this.over = false
    if (over) return { head: text }
    return exceedsBytes(text, this.maxBytes) ? { head: text.slice(0, HEAD_CHARS) } : { text }
  }
}

/** One line of a text: its content (or head, when too long) and its 1-based number. */
export type TextLine = BoundedText & { line: number }

/**
 * Splits a text into lines as chunks arrive, each bounded by BoundedParts. A line's size leaves out
 * the \r of a CRLF ending when the two arrive in the same chunk (nearly always); its text keeps it.
 */
export class TextLines {
  private readonly current: BoundedParts
  private line = 0

  constructor(maxBytes: number) {
    this.current = new BoundedParts(maxBytes)
  }

  push(text: string): TextLine[] {
    const out: TextLine[] = []
    let from = 0
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', from)) {
      const crlf = newline > from && text.charCodeAt(newline - 1) === 13
      this.current.append(text.slice(from, crlf ? newline - 1 : newline))
      const taken = this.current.take()
      // Measured without it, the \r stays in the text as written (an excerpt shows the line as sent).
      out.push({ line: ++this.line, ...('text' in taken && crlf ? { text: `${taken.text}\r` } : taken) })
      from = newline + 1
    }
    this.current.append(text.slice(from))
    return out
  }

  /** The last line, when the text does not end with a line break. */
  end(): TextLine[] {
    return this.current.empty ? [] : [{ line: ++this.line, ...this.current.take() }]
  }
}

/** The UTF-8 size of a text, measured only when its length in UTF-16 units leaves it in doubt. */
export function exceedsBytes(text: string, max: number): boolean {
  if (text.length > max) return true
  // A UTF-16 unit is at most 3 UTF-8 bytes.
  return text.length * 3 > max && Buffer.byteLength(text) > max
}
