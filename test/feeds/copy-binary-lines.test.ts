import { describe, expect, it } from 'vitest'
import { CopyBinaryLines } from '../../src/feeds/copy-binary-lines.js'

// A binary COPY stream as Postgres writes it for a one-column SELECT of text: signature, flags,
// header extension, then per row a field count, a length (-1 for NULL) and the bytes; -1 to end.
function copyStream(values: (string | null)[], extension = Buffer.alloc(0)): Buffer {
  const parts = [Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(4), Buffer.alloc(4)]
  parts[2]?.writeUInt32BE(extension.length)
  parts.push(extension)
  for (const value of values) {
    const head = Buffer.alloc(6)
    head.writeInt16BE(1, 0)
    const bytes = value === null ? undefined : Buffer.from(value)
    head.writeInt32BE(bytes ? bytes.length : -1, 2)
    parts.push(head, ...(bytes ? [bytes] : []))
  }
  const end = Buffer.alloc(2)
  end.writeInt16BE(-1)
  return Buffer.concat([...parts, end])
}

function decodeIn(chunks: Buffer[]): string {
  const lines = new CopyBinaryLines()
  const out = chunks.flatMap((chunk) => lines.decode(chunk))
  lines.end()
  return Buffer.concat(out).toString()
}

const VALUES = ['a,b', '', 'quoted "x"\nsecond line', 'ü€😀', null, 'x'.repeat(70_000)]
const EXPECTED = 'a,b\n\nquoted "x"\nsecond line\nü€😀\n\n' + 'x'.repeat(70_000) + '\n'

describe('CopyBinaryLines', () => {
  it('turns each value into its bytes and a newline, NULL into an empty line', () => {
    expect(decodeIn([copyStream(VALUES)])).toBe(EXPECTED)
  })

  it('gives the same lines wherever the stream is split, a header extension included', () => {
    const stream = copyStream(VALUES.slice(0, 5), Buffer.from('ext'))
    const expected = 'a,b\n\nquoted "x"\nsecond line\nü€😀\n\n'
    for (let cut = 0; cut <= stream.length; cut++) {
      expect(decodeIn([stream.subarray(0, cut), stream.subarray(cut)])).toBe(expected)
    }
    expect(decodeIn([...stream].map((byte) => Buffer.from([byte])))).toBe(expected)
  })

  it('refuses what is not a whole binary COPY stream of one column', () => {
    expect(() => new CopyBinaryLines().decode(Buffer.from('not a copy stream at all'))).toThrow(/not a binary COPY/)
    const stream = copyStream(['a', 'b'])
    expect(() => decodeIn([stream.subarray(0, stream.length - 3)])).toThrow(/ended early/)
    const twoColumns = Buffer.from(stream)
    twoColumns.writeInt16BE(2, 19)
    expect(() => decodeIn([twoColumns])).toThrow(/2 columns/)
    expect(() => decodeIn([stream, Buffer.from('x')])).toThrow(/after the end/)
  })
})
