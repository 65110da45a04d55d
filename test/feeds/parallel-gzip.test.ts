import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { buffer } from 'node:stream/consumers'
import { gunzipSync } from 'node:zlib'
import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { ParallelGzip } from '../../src/feeds/parallel-gzip.js'

// The gzip member written in parallel blocks is one ordinary gzip stream: zlib and the gzip tool
// both read it back byte for byte, whatever the sizes of the pieces it was given.

async function compress(pieces: Buffer[]): Promise<Buffer> {
  return buffer(Readable.from(pieces).pipe(new ParallelGzip()))
}

/** Feed-like text: repetitive lines, so that the dictionary carried between blocks matters. */
function feedText(lines: number): Buffer {
  return Buffer.from(Array.from({ length: lines }, (_, i) => `p-${i},Product ${i % 997},"A description of product ${i}",${(i % 50) + 0.99} EUR\n`).join(''))
}

describe('ParallelGzip', () => {
  it('writes one gzip member that inflates to the input, for inputs around the block size', async () => {
    const block = 1024 * 1024
    for (const size of [0, 1, 100, block - 1, block, block + 1, 3 * block + 17]) {
      const input = randomBytes(size)
      const output = await compress([input])
      expect(gunzipSync(output).equals(input), `${size} bytes`).toBe(true)
    }
  })

  it('takes its input in pieces of any size, and compresses feed text as well as one stream does', async () => {
    const input = feedText(200_000)
    const pieces: Buffer[] = []
    for (let at = 0, n = 1; at < input.length; at += n, n = (n * 7 + 13) % 300_000) pieces.push(input.subarray(at, at + n))
    const output = await compress(pieces)
    expect(gunzipSync(output).equals(input)).toBe(true)
    // The previous block's window is each block's dictionary: no worse than a few percent over one zlib stream.
    const single = (await import('node:zlib')).gzipSync(input, { level: 1 })
    expect(output.length).toBeLessThan(single.length * 1.05)
  })

  it('is read by the gzip tool, trailer (CRC-32 and size) included', async () => {
    const input = feedText(60_000)
    const output = await compress([input])
    const gzip = spawnSync('gzip', ['-dc'], { input: output, maxBuffer: 64 * 1024 * 1024 })
    expect(gzip.status, gzip.stderr.toString()).toBe(0)
    expect(gzip.stdout.equals(input)).toBe(true)
  })
})
