import { isUtf8 } from 'node:buffer'
import { describe, expect, it } from 'vitest'
import { LineSplitter, type SplitItem } from '../../src/streams/line-splitter.js'

// Where a chunk boundary falls is up to the network; app.inject cannot place one. These cases pin the
// splitter at the boundaries that matter, and must agree with what a whole line in one chunk gets.

const MAX_LINE = 2_097_152

function split(chunks: Buffer[]): SplitItem[] {
  const splitter = new LineSplitter()
  const items: SplitItem[] = []
  for (const chunk of chunks) splitter.push(chunk, (item) => items.push(item))
  splitter.end((item) => items.push(item))
  return items
}

/** What the upload makes of each line: a line over the limit (its \r not counted) is refused. */
function outcomes(items: SplitItem[]): string[] {
  return items.flatMap((item) => {
    if ('oversizedHead' in item) return ['refused']
    return item.block
      .toString('latin1')
      .split('\n')
      .map((line) => {
        const bytes = line.length - (line.endsWith('\r') ? 1 : 0)
        return bytes > MAX_LINE ? 'refused' : `kept ${line.length}`
      })
  })
}

describe('LineSplitter', () => {
  it('keeps a line of exactly the limit whose \\r ends one chunk and whose \\n starts the next', () => {
    const line = Buffer.alloc(MAX_LINE, 'x')
    const items = split([Buffer.concat([line, Buffer.from('\r')]), Buffer.from('\n{"id":"after"}\n')])
    expect(outcomes(items)).toEqual([`kept ${MAX_LINE + 1}`, 'kept 14'])
  })

  it('refuses a line one byte over the limit even when it ends in \\r', () => {
    const items = split([Buffer.alloc(MAX_LINE + 1, 'x'), Buffer.from('\r'), Buffer.from('\n{"id":"after"}\n')])
    expect(outcomes(items)).toEqual(['refused', 'kept 14'])
  })

  it('refuses a line whose \\r at the limit is followed by more than the line ending', () => {
    const items = split([Buffer.concat([Buffer.alloc(MAX_LINE, 'x'), Buffer.from('\r')]), Buffer.from('y\n{"id":"after"}\n')])
    expect(outcomes(items)).toEqual(['refused', 'kept 14'])
  })

  it('keeps the head of an oversized line whole characters only (valid UTF-8)', () => {
    const head = Buffer.from('{"id":"big","d":"')
    const chunks = [head]
    for (let sent = 0; sent <= MAX_LINE; sent += 64 * 1024) chunks.push(Buffer.from('é'.repeat(32 * 1024)))
    chunks.push(Buffer.from('"}\n'))
    const [first] = split(chunks)
    if (!first || !('oversizedHead' in first)) throw new Error('expected an oversized line')
    expect(isUtf8(first.oversizedHead)).toBe(true)
    expect(first.oversizedHead.length).toBeGreaterThan(990)
    expect(first.oversizedHead.subarray(0, head.length)).toEqual(head)
  })
})
