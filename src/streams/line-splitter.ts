import { exceedsLineLimit } from '../catalog/row-rules.js'

export type SplitItem = { block: Buffer } | { oversizedHead: Buffer }

const NEWLINE = 10
const CARRIAGE_RETURN = 13
const HEAD_BYTES = 1000

/**
 * Splits a byte stream into blocks of whole lines (a block holds one or more lines joined by \n),
 * so that callers decode and check UTF-8 once per block instead of once per line. A line that grows
 * past the line limit before its newline arrives is not kept: only its first bytes are, for the
 * error example, and the rest is skipped up to the next newline. Memory stays bounded by one
 * maximal line plus one chunk, whatever the body size.
 */
export class LineSplitter {
  private pending: Buffer[] = []
  private pendingBytes = 0
  private skipping: Buffer | undefined

  push(chunk: Buffer, emit: (item: SplitItem) => void): void {
    let start = 0
    if (this.skipping) {
      const newline = chunk.indexOf(NEWLINE)
      if (newline === -1) return
      emit({ oversizedHead: this.skipping })
      this.skipping = undefined
      start = newline + 1
    }
    const lastNewline = chunk.lastIndexOf(NEWLINE)
    if (lastNewline < start) {
      this.keep(chunk.subarray(start))
      return
    }
    const complete = chunk.subarray(start, lastNewline)
    const block = this.pendingBytes > 0 ? Buffer.concat([...this.pending, complete]) : complete
    this.pending = []
    this.pendingBytes = 0
    emit({ block })
    this.keep(chunk.subarray(lastNewline + 1))
  }

  /** The last line when the body does not end with a newline. */
  end(emit: (item: SplitItem) => void): void {
    if (this.skipping) emit({ oversizedHead: this.skipping })
    else if (this.pendingBytes > 0) {
      const last = Buffer.concat(this.pending)
      // Blanks after the final newline are serializer padding, not an empty line (docs/compatibility.md).
      if (last.toString('latin1').trim() !== '') emit({ block: last })
    }
    this.pending = []
    this.pendingBytes = 0
    this.skipping = undefined
  }

  private keep(part: Buffer): void {
    if (part.length === 0) return
    this.pending.push(part)
    this.pendingBytes += part.length
    if (exceedsLineLimit(this.pendingBytes, part[part.length - 1] === CARRIAGE_RETURN)) {
      this.skipping = utf8Head(Buffer.concat(this.pending), HEAD_BYTES)
      this.pending = []
      this.pendingBytes = 0
    }
  }
}

/** At most `bytes` bytes, cut before a character whose UTF-8 sequence the cut would split. */
function utf8Head(data: Buffer, bytes: number): Buffer {
  if (data.length <= bytes) return data
  let end = bytes
  // Continuation bytes are 10xxxxxx; stepping back over at most three reaches the character's start.
  while (end > bytes - 4 && (data[end]! & 0xc0) === 0x80) end--
  return data.subarray(0, end)
}
