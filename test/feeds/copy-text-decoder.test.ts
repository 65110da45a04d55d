import { describe, expect, it } from 'vitest'
import { CopyTextDecoder } from '../../src/feeds/copy-text-decoder.js'

function decodeInPieces(input: string, cuts: number[]): string {
  const bytes = Buffer.from(input)
  const decoder = new CopyTextDecoder()
  const out: Buffer[] = []
  let from = 0
  for (const cut of [...cuts, bytes.length]) {
    out.push(decoder.decode(bytes.subarray(from, cut)))
    from = cut
  }
  decoder.end()
  return Buffer.concat(out).toString('utf8')
}

describe('CopyTextDecoder', () => {
  const escaped = 'a\\\\b\\tc\\nd\\re\\bf\\fg\\vh ü\\\\\\\\日本\\n'
  const plain = 'a\\b\tc\nd\re\bf\fg\vh ü\\\\日本\n'

  it('undoes every escape COPY text format writes', () => {
    expect(decodeInPieces(escaped, [])).toBe(plain)
  })

  it('gives the same result wherever the chunks are cut', () => {
    const length = Buffer.byteLength(escaped)
    for (let cut = 0; cut <= length; cut++) expect(decodeInPieces(escaped, [cut]), `cut at ${cut}`).toBe(plain)
    for (let cut = 1; cut < length; cut++) expect(decodeInPieces(escaped, [cut - 1, cut])).toBe(plain)
  })

  it('passes a chunk without backslashes through as it is', () => {
    const chunk = Buffer.from('no escapes here\n')
    expect(new CopyTextDecoder().decode(chunk)).toBe(chunk)
  })

  it('refuses an escape a feed line never holds, and output ending inside an escape', () => {
    expect(() => new CopyTextDecoder().decode(Buffer.from('a\\Nb'))).toThrow(/unexpected escape \\N/)
    const decoder = new CopyTextDecoder()
    decoder.decode(Buffer.from('abc\\'))
    expect(() => decoder.end()).toThrow(/inside an escape/)
  })
})
