import { BoundedParts, type BoundedText } from '../catalog/bounded-text.js'
import { SourceFormatError } from './source-types.js'

/** One element of the product array: its text (or head, when too long) and the line it starts on. */
export type JsonElementText = BoundedText & { line: number }

type State = 'start' | 'members' | 'name' | 'colon' | 'value' | 'array' | 'element' | 'skip' | 'after'

const QUOTE = 34
const BACKSLASH = 92
const COMMA = 44
const COLON = 58
const OPEN_BRACKET = 91
const CLOSE_BRACKET = 93
const OPEN_BRACE = 123
const CLOSE_BRACE = 125
const NEWLINE = 10

/**
 * Splits a JSON source into the texts of its products as chunks arrive: the elements of a top-level
 * array, or of the first array member of a top-level object (`{"products": [...]}`; its other
 * members are skipped unread). Only strings and nesting are tracked; JSON.parse of each element does
 * the rest, so memory is one element at most (bounded, see BoundedParts), whatever the file's size.
 *
 * A stream's referenced payloads are split by src/imports/json-elements.ts instead: they may also be
 * objects one after the other without an array, and what follows the array is a refused record
 * there, where a source's file fails whole. Both bound an element with BoundedParts.
 */
export class JsonElementsReader {
  private state: State = 'start'
  private wrapped = false
  private foundArray = false
  private line = 1
  private depth = 0
  private inString = false
  private escaped = false
  private elementLine = 1
  private readonly element: BoundedParts
  private out: JsonElementText[] = []

  constructor(maxBytes: number) {
    this.element = new BoundedParts(maxBytes)
  }

  push(text: string): JsonElementText[] {
    let i = 0
    while (i < text.length) i = this.step(text, i)
    const out = this.out
    this.out = []
    return out
  }

  /** Ends the file: an array or object still open means it was cut off. */
  end(): void {
    if (this.state === 'start' || this.state === 'after') return
    throw new SourceFormatError(`the JSON ends at line ${this.line} before its ${this.wrapped ? 'object' : 'array'} is closed: is the file cut off?`)
  }

  /** Handles the text from `i` in the current state; returns where the next state starts. */
  private step(text: string, i: number): number {
    switch (this.state) {
      case 'element':
        return this.scanElement(text, i)
      case 'skip':
        return this.scanSkipped(text, i)
      case 'name':
        return this.scanName(text, i)
      default:
        return this.structural(text, i)
    }
  }

  /** Between values: whitespace is skipped, one character decides what comes next. */
  private structural(text: string, i: number): number {
    const c = text.charCodeAt(i)
    if (c === NEWLINE) this.line++
    if (c === NEWLINE || c === 32 || c === 9 || c === 13) return i + 1
    switch (this.state) {
      case 'start':
        return this.opening(c, i)
      case 'members':
        return this.member(c, i)
      case 'colon':
        if (c !== COLON) throw this.unexpected(text, i)
        this.state = 'value'
        return i + 1
      case 'value':
        return this.memberValue(c, i)
      case 'array':
        return this.arrayItem(c, i)
      default:
        throw new SourceFormatError(`the JSON goes on after its end, at line ${this.line}`)
    }
  }

  private opening(c: number, i: number): number {
    if (c === OPEN_BRACKET) this.state = 'array'
    else if (c === OPEN_BRACE) {
      this.state = 'members'
      this.wrapped = true
    } else throw new SourceFormatError('a JSON source is an array of products, or an object holding one')
    return i + 1
  }

  private member(c: number, i: number): number {
    if (c === COMMA) return i + 1
    if (c === QUOTE) {
      this.state = 'name'
      return i + 1
    }
    if (c !== CLOSE_BRACE) throw new SourceFormatError(`the JSON object is malformed at line ${this.line}`)
    if (!this.foundArray) throw new SourceFormatError('the JSON object holds no array of products')
    this.state = 'after'
    return i + 1
  }

  private memberValue(c: number, i: number): number {
    if (c === OPEN_BRACKET && !this.foundArray) {
      this.foundArray = true
      this.state = 'array'
      return i + 1
    }
    this.state = 'skip'
    this.depth = 0
    return i
  }

  private arrayItem(c: number, i: number): number {
    if (c === COMMA) return i + 1
    if (c === CLOSE_BRACKET) {
      this.state = this.wrapped ? 'members' : 'after'
      return i + 1
    }
    this.state = 'element'
    this.elementLine = this.line
    this.depth = 0
    return i
  }

  private scanElement(text: string, from: number): number {
    const end = this.scanValue(text, from, CLOSE_BRACKET)
    this.element.append(text.slice(from, end === -1 ? text.length : end))
    if (end === -1) return text.length
    this.out.push({ line: this.elementLine, ...this.element.take() })
    this.state = 'array'
    return end
  }

  private scanSkipped(text: string, from: number): number {
    const end = this.scanValue(text, from, CLOSE_BRACE)
    if (end === -1) return text.length
    this.state = 'members'
    return end
  }

  private scanName(text: string, from: number): number {
    const end = this.scanValue(text, from, -1)
    if (end === -1) return text.length
    this.state = 'colon'
    return end
  }

  /**
   * Scans one value from `from`: returns the index of the ',' or `closer` that ends it (outside
   * strings and nesting), or -1 when the text ends first. In the 'name' state it only finishes the
   * string it is in.
   */
  private scanValue(text: string, from: number, closer: number): number {
    for (let i = from; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c === NEWLINE) this.line++
      if (this.inString || this.state === 'name') {
        if (this.escaped) this.escaped = false
        else if (c === BACKSLASH) this.escaped = true
        else if (c === QUOTE) {
          this.inString = false
          if (this.state === 'name') return i + 1
        }
        continue
      }
      if (c === QUOTE) this.inString = true
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) this.depth++
      else if ((c === COMMA || c === closer) && this.depth <= 0) return i
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) this.depth--
    }
    return -1
  }

  private unexpected(text: string, i: number): SourceFormatError {
    return new SourceFormatError(`the JSON object is malformed at line ${this.line}: unexpected ${JSON.stringify(text.charAt(i))}`)
  }
}
