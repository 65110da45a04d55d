import type { Readable } from 'node:stream'
import { createGunzip } from 'node:zlib'
import { BadRequestError, PayloadTooLargeError, RequestTimeoutError, UnsupportedMediaTypeError } from '../errors.js'

/**
 * The request body as decoded chunks: gunzipped as a stream when announced, and cut off with a 413
 * once more than `maxBytes` have come out, so that neither a large body nor a gzip bomb can pass.
 */
export interface BodyLimits {
  maxBytes: number
  /** Fires at the request's deadline: reading stops, but the socket stays open for the 503. */
  signal: AbortSignal
  timeoutMs: number
}

export async function* decodedBody(raw: Readable, contentEncoding: string | undefined, limits: BodyLimits): AsyncGenerator<Buffer> {
  const { maxBytes, signal, timeoutMs } = limits
  const encoding = (contentEncoding ?? 'identity').trim().toLowerCase()
  let source: Readable = raw
  if (encoding === 'gzip' || encoding === 'x-gzip') {
    const gunzip = createGunzip()
    raw.on('error', (error) => gunzip.destroy(error))
    raw.pipe(gunzip)
    source = gunzip
  } else if (encoding !== 'identity' && encoding !== '') {
    throw new UnsupportedMediaTypeError(`Content-Encoding ${encoding} is not supported; send gzip or an uncompressed body`)
  }
  let total = 0
  const deadline = new Promise<never>((_, reject) => {
    const fire = () => reject(new RequestTimeoutError(timeoutMs))
    if (signal.aborted) fire()
    else signal.addEventListener('abort', fire, { once: true })
  })
  deadline.catch(() => {})
  const chunks = source.iterator({ destroyOnReturn: false })
  try {
    for (;;) {
      const next = await Promise.race([chunks.next(), deadline])
      if (next.done) break
      const buffer = next.value as Buffer
      total += buffer.length
      if (total > maxBytes) throw new PayloadTooLargeError(`The body is larger than ${maxBytes} bytes (after decompression)`)
      yield buffer
    }
  } catch (error) {
    if (source !== raw && isZlibError(error)) throw new BadRequestError(`The gzip body is corrupt: ${(error as Error).message}`)
    throw error
  } finally {
    // Stop reading; an unread rest of the body is discarded when the response has been sent.
    source.pause()
  }
}

function isZlibError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return typeof code === 'string' && code.startsWith('Z_')
}
