import type { IncomingHttpHeaders } from 'node:http'
import type { ByteRange } from '../feeds/feed-storage.js'

/** What a request's Range header asks of a representation of `size` bytes (RFC 9110 section 14). */
export type RangeAnswer = { kind: 'whole' } | { kind: 'partial'; range: ByteRange } | { kind: 'unsatisfiable' }

// One range is served as asked. Several ranges (multipart/byteranges) are answered with the whole
// file, as the RFC allows: feed clients resume downloads with one range, and a list of small ranges
// is a way to make a server do much work for little.
// Not the `range-parser` package: it parses and merges lists of ranges, which are answered whole
// here, and knows nothing of If-Range; one range is this pattern and a few lines.
const ONE_RANGE = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/i

/**
 * The range to serve. `currentTags` are the ETags of the file now: an If-Range naming another
 * version, or a date before its last change, asks for the whole file (the client's copy is stale).
 */
export function rangeOf(headers: IncomingHttpHeaders, size: number, currentTags: string[], lastModified: Date): RangeAnswer {
  const header = headers.range
  if (header === undefined || !ifRangeHolds(headers['if-range'], currentTags, lastModified)) return { kind: 'whole' }
  const match = ONE_RANGE.exec(header)
  if (!match) return { kind: 'whole' }
  const [, first = '', last = ''] = match
  if (first === '' && last === '') return { kind: 'whole' }
  if (first === '') {
    // A suffix: the last N bytes.
    const length = Number(last)
    if (length === 0 || size === 0) return { kind: 'unsatisfiable' }
    return { kind: 'partial', range: { start: Math.max(0, size - length), end: size - 1 } }
  }
  const start = Number(first)
  if (!Number.isSafeInteger(start) || start >= size) return { kind: 'unsatisfiable' }
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1)
  if (end < start) return { kind: 'whole' }
  return { kind: 'partial', range: { start, end } }
}

function ifRangeHolds(ifRange: string | string[] | undefined, currentTags: string[], lastModified: Date): boolean {
  if (ifRange === undefined) return true
  if (Array.isArray(ifRange)) return false
  const value = ifRange.trim()
  // An entity tag: only a strong one that names the current file (weak tags never match here).
  if (value.startsWith('"')) return currentTags.includes(value)
  if (value.startsWith('W/')) return false
  const date = Date.parse(value)
  return !Number.isNaN(date) && Math.floor(lastModified.getTime() / 1000) * 1000 <= date
}
