import { MAX_LINE_BYTES } from '../catalog/row-rules.js'

export type Element =
  | { kind: 'text'; text: string; index: number }
  | { kind: 'tooLarge'; head: string; index: number }
  | { kind: 'trailing'; text: string; index: number }

const HEAD_CHARS = 1000

/**
 * Splits a referenced payload into its product texts as chunks arrive: the elements of a top-level
 * JSON array, or whitespace-separated objects (NDJSON). Each element then goes through the same row
 * rules as a chunked line, so numbers keep their digits as written, which a streaming JSON parser
 * would not give. Only strings and nesting are tracked here; JSON.parse of the element does the rest.
 */
export class JsonElementSplitter {
  private mode: 'unknown' | 'array' | 'objects' = 'unknown'
  private closed = false
  private started = false
  private depth = 0
  private inString = false
  private escaped = false
  private parts: string[] = []
  private chars = 0
  private oversized = false
  private index = 0

  push(text: string): Element[] {
    const out: Element[] = []
    let from = 0
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (!this.started) {
        if (isBlank(c)) continue
        if (this.mode === 'unknown' && c === 91 /* [ */) {
          this.mode = 'array'
          continue
        }
        if (this.mode === 'unknown') this.mode = 'objects'
        if (this.closed) {
          out.push({ kind: 'trailing', text: text.slice(i, i + HEAD_CHARS), index: ++this.index })
          this.closed = false
          this.mode = 'objects'
        }
        if (this.mode === 'array' && c === 44 /* , */) continue
        if (this.mode === 'array' && c === 93 /* ] */) {
          this.closed = true
          continue
        }
        this.started = true
        this.depth = 0
        from = i
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false
        else if (c === 92 /* \ */) this.escaped = true
        else if (c === 34 /* " */) this.inString = false
        continue
      }
      if (c === 34) {
        this.inString = true
      } else if (c === 123 /* { */ || c === 91) {
        this.depth++
      } else if (c === 125 /* } */ || c === 93) {
        if (this.depth === 0 && this.mode === 'array' && c === 93) {
          // The array's closing bracket ends the element before it.
          this.finish(text.slice(from, i), out)
          this.closed = true
          continue
        }
        this.depth--
        if (this.depth === 0 && this.mode === 'objects') {
          this.finish(text.slice(from, i + 1), out)
          continue
        }
      } else if (this.depth <= 0 && ((this.mode === 'array' && c === 44) || (this.mode === 'objects' && (c === 10 || c === 13)))) {
        this.finish(text.slice(from, i), out)
      }
    }
    if (this.started) this.append(text.slice(from))
    return out
  }

  /** Ends the payload: an element still open is handed over as it is (its parse will fail). */
  end(): Element[] {
    const out: Element[] = []
    if (this.started) this.finish('', out)
    return out
  }

  private append(part: string): void {
    if (this.oversized || part === '') return
    this.chars += part.length
    if (this.chars > MAX_LINE_BYTES) {
      this.oversized = true
      this.parts = [this.parts.join('').slice(0, HEAD_CHARS)]
      return
    }
    this.parts.push(part)
  }

  private finish(lastPart: string, out: Element[]): void {
    this.append(lastPart)
    const index = ++this.index
    const text = this.parts.join('')
    out.push(this.oversized ? { kind: 'tooLarge', head: text, index } : { kind: 'text', text, index })
    this.parts = []
    this.chars = 0
    this.started = false
    this.oversized = false
    this.inString = false
    this.escaped = false
    this.depth = 0
  }
}

function isBlank(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9
}
