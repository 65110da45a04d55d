const BACKSLASH = 0x5c

// The sequences COPY ... TO (text format) writes: a backslash, and the control characters it
// spells out (backspace, form feed, LF, CR, tab, vertical tab). Any other one (`\N` for NULL) would
// mean the query produced something a feed line never holds.
const UNESCAPED = new Map<number, number>([
  [BACKSLASH, BACKSLASH],
  [0x62, 0x08], // b
  [0x66, 0x0c], // f
  [0x6e, 0x0a], // n
  [0x72, 0x0d], // r
  [0x74, 0x09], // t
  [0x76, 0x0b], // v
])

/**
 * Undoes COPY's text-format escapes in a stream of chunks. An escape may be split between two
 * chunks: a trailing backslash is held until the next one. Works on bytes: in UTF-8 a backslash
 * byte never occurs inside a multi-byte character.
 */
export class CopyTextDecoder {
  private pendingBackslash = false

  decode(chunk: Buffer): Buffer {
    if (!this.pendingBackslash && chunk.indexOf(BACKSLASH) === -1) return chunk
    // Every escape shrinks two bytes to one, so the output never outgrows the input.
    const out = Buffer.allocUnsafe(chunk.length)
    let written = 0
    let start = 0
    if (this.pendingBackslash && chunk.length > 0) {
      out[written++] = unescape(chunk[0] as number)
      this.pendingBackslash = false
      start = 1
    }
    while (start < chunk.length) {
      const at = chunk.indexOf(BACKSLASH, start)
      const end = at === -1 ? chunk.length : at
      written += chunk.copy(out, written, start, end)
      if (at === -1) break
      if (at + 1 === chunk.length) {
        this.pendingBackslash = true
        break
      }
      out[written++] = unescape(chunk[at + 1] as number)
      start = at + 2
    }
    return out.subarray(0, written)
  }

  /** Throws if the stream ended in the middle of an escape. */
  end(): void {
    if (this.pendingBackslash) throw new Error('COPY output ended inside an escape sequence')
  }
}

function unescape(byte: number): number {
  const value = UNESCAPED.get(byte)
  if (value === undefined) throw new Error(`unexpected escape \\${String.fromCharCode(byte)} in COPY output`)
  return value
}
