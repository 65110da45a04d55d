import type { IncomingHttpHeaders } from 'node:http'

/**
 * Whether a conditional GET can be answered 304 (RFC 9110 13.1.2 and 13.1.3). If-None-Match uses
 * weak comparison and wins over If-Modified-Since when both are sent. `tags` are every tag of the
 * same content (plain and gzip): a client holding either has the current file.
 */
export function notModified(headers: IncomingHttpHeaders, tags: string[], lastModified: Date): boolean {
  const ifNoneMatch = headers['if-none-match']
  if (ifNoneMatch !== undefined) {
    const candidates = ifNoneMatch.split(',').map((tag) => tag.trim())
    if (candidates.includes('*')) return true
    const ours = new Set(tags.map(opaque))
    return candidates.some((tag) => ours.has(opaque(tag)))
  }
  const ifModifiedSince = headers['if-modified-since']
  if (ifModifiedSince === undefined) return false
  const since = Date.parse(ifModifiedSince)
  if (Number.isNaN(since)) return false
  // HTTP dates have whole seconds: a file written at 12:00:00.400 was not modified after 12:00:00.
  return Math.floor(lastModified.getTime() / 1000) * 1000 <= since
}

function opaque(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag
}
