import { Readable } from 'node:stream'

// Writes of about this size: few enough for a large page, small enough to hold little at a time.
const CHUNK_CHARS = 64 * 1024

/**
 * A JSON body made of texts already serialised (`prefix`, the items joined by commas, `suffix`),
 * streamed in chunks: a large page is never copied into one more string or buffer of its size.
 */
export function jsonTextStream(prefix: string, items: readonly string[], suffix: string): Readable {
  function* chunks(): Generator<string> {
    let chunk = prefix
    for (let i = 0; i < items.length; i++) {
      chunk += i === 0 ? items[i] : `,${items[i]}`
      if (chunk.length >= CHUNK_CHARS) {
        yield chunk
        chunk = ''
      }
    }
    yield chunk + suffix
  }
  return Readable.from(chunks(), { objectMode: false })
}
