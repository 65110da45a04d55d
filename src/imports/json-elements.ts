import { BoundedParts, HEAD_CHARS, TextLines, type TextLine } from '../catalog/bounded-text.js'
import { MAX_LINE_BYTES } from '../catalog/row-rules.js'

export type Element =
  { kind: 'text'; text: string; index: number } | { kind: 'tooLarge'; head: string; index: number } | { kind: 'trailing'; text: string; index: number }

/** Splits a referenced payload into product texts as its decoded chunks arrive. */
export interface ElementSplitter {
  push(text: string): Element[]
  /** Ends the payload: what is still open is handed over as it is. */
  end(): Element[]
}

/**
 * The splitter for a payload of this media type (the batch's content type): NDJSON is split at its
 * newlines, whatever a line holds; anything else (application/json) by its JSON structure.
 */
export function elementSplitter(contentType: string | null): ElementSplitter {
  return contentType === 'application/x-ndjson' ? new NdjsonLineSplitter() : new JsonElementSplitter()
}

/**
 * Splits NDJSON into its lines, as the line splitter of chunked uploads does: a line is one product
 * whatever it holds, so a broken one (an unterminated string, an unbalanced brace, something after
 * the object) fails alone and never takes the lines after it along. Elements are numbered by line;
 * blank lines are not products. The \r of a CRLF line end is not measured, but stays in the text.
 */
export class NdjsonLineSplitter implements ElementSplitter {
  private readonly lines = new TextLines(MAX_LINE_BYTES)

  push(text: string): Element[] {
    return this.lines.push(text).flatMap(lineElement)
  }

  end(): Element[] {
    return this.lines.end().flatMap(lineElement)
  }
}

function lineElement(line: TextLine): Element[] {
  if ('head' in line) return [{ kind: 'tooLarge', head: line.head, index: line.line }]
  return line.text.trim() === '' ? [] : [{ kind: 'text', text: line.text, index: line.line }]
}

/**
 * Splits a JSON payload into its product texts as chunks arrive: the elements of a top-level JSON
 * array, or whitespace-separated objects. Each element then goes through the same row rules as a
 * chunked line, so numbers keep their digits as written, which a streaming JSON parser would not
 * give. Only strings and nesting are tracked here; JSON.parse of the element does the rest.
 */
export class JsonElementSplitter implements ElementSplitter {
  private mode: 'unknown' | 'array' | 'objects' = 'unknown'
  private closed = false
  private started = false
  private depth = 0
  private inString = false
  private escaped = false
  private readonly current = new BoundedParts(MAX_LINE_BYTES)
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
    if (this.started) this.current.append(text.slice(from))
    return out
  }

  /** Ends the payload: an element still open is handed over as it is (its parse will fail). */
  end(): Element[] {
    const out: Element[] = []
    if (this.started) this.finish('', out)
    return out
  }

  private finish(lastPart: string, out: Element[]): void {
    this.current.append(lastPart)
    const index = ++this.index
    const taken = this.current.take()
    out.push('head' in taken ? { kind: 'tooLarge', head: taken.head, index } : { kind: 'text', text: taken.text, index })
    this.started = false
    this.inString = false
    this.escaped = false
    this.depth = 0
  }
}

function isBlank(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9
}
