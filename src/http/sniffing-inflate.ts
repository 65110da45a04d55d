import { Transform, type TransformCallback } from 'node:stream'
import zlib from 'node:zlib'

/**
 * Decompresses a body labelled gzip or deflate by what its first bytes are, not by its label:
 * gzip (1f 8b), zlib-wrapped deflate (RFC 1950 header), or else raw deflate, which PHP's
 * gzdeflate() produces and the official PHP client labels `gzip`. The zlib stream is chosen at the
 * first chunk; its output is passed on with backpressure (paused while our reader is behind).
 */
export class SniffingInflate extends Transform {
  private inner: zlib.Gunzip | zlib.Inflate | zlib.InflateRaw | undefined
  // A first chunk too short to tell the formats apart waits for the next.
  private head = Buffer.alloc(0)

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (!this.inner) {
      this.head = Buffer.concat([this.head, chunk])
      if (this.head.length < 2) return callback()
      chunk = this.head
      this.inner = this.start(chunk)
    }
    this.inner.write(chunk, (error) => callback(error ?? undefined))
  }

  override _flush(callback: TransformCallback): void {
    // No bytes at all decode to no bytes (an empty payload, as uncompressed); a body shorter than
    // two bytes is left to the zlib stream to judge.
    if (this.inner === undefined && this.head.length === 0) return callback()
    const short = this.inner === undefined
    const inner = (this.inner ??= this.start(this.head))
    inner.once('end', () => callback())
    if (short && this.head.length > 0) inner.end(this.head)
    else inner.end()
  }

  override _read(size: number): void {
    this.inner?.resume()
    super._read(size)
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.inner?.destroy()
    callback(error)
  }

  private start(first: Buffer): zlib.Gunzip | zlib.Inflate | zlib.InflateRaw {
    const inner = first[0] === 0x1f && first[1] === 0x8b ? zlib.createGunzip() : isZlibHeader(first) ? zlib.createInflate() : zlib.createInflateRaw()
    inner.on('data', (data: Buffer) => {
      if (!this.push(data)) inner.pause()
    })
    inner.on('error', (error) => this.destroy(error))
    return inner
  }
}

/** RFC 1950: compression method 8 in the low nibble, and the two header bytes a multiple of 31. */
export function isZlibHeader(bytes: Buffer): boolean {
  return bytes.length >= 2 && (bytes[0]! & 0x0f) === 8 && ((bytes[0]! << 8) | bytes[1]!) % 31 === 0
}
