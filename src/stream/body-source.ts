import { PassThrough, type Readable, type Transform } from 'node:stream'
import { createGunzip } from 'node:zlib'
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js'
import { ClientClosedError, type UploadDeadline } from './deadline.js'

export interface BodyLimits {
  maxBytes: number
  /** Aborts at the request's deadline: reading stops, but the socket stays open for the 503. */
  deadline: UploadDeadline
}

/**
 * The request body as decoded chunks: gunzipped as a stream when announced, and cut off with a 413
 * once more than `maxBytes` have come out, so that neither a large body nor a gzip bomb can pass.
 */
export async function* decodedBody(raw: Readable, contentEncoding: string | undefined, limits: BodyLimits): AsyncGenerator<Buffer> {
  const encoding = (contentEncoding ?? 'identity').trim().toLowerCase()
  const gzipped = encoding === 'gzip' || encoding === 'x-gzip'
  if (!gzipped && encoding !== 'identity' && encoding !== '') {
    throw new UnsupportedMediaTypeError(`Content-Encoding ${encoding} is not supported; send gzip or an uncompressed body`)
  }
  // A client gone before its body is read (while the upload waited for the database, say) has had
  // its 'aborted' and 'close' already: piping it would wait forever, holding the transaction.
  if (raw.destroyed || raw.readableAborted || raw.errored) throw new ClientClosedError()
  const { signal } = limits.deadline
  // The body is read through a stream of our own, piped from the request: at the deadline it is
  // unpiped and destroyed, which ends the loop below while the socket stays usable for the answer.
  const source: Transform = gzipped ? createGunzip() : new PassThrough()
  const fail = (error: Error) => {
    raw.unpipe(source)
    source.destroy(error)
  }
  const onTimeout = () => fail(limits.deadline.reason)
  const onRequestError = (error: Error) => fail(error)
  if (signal.aborted) onTimeout()
  signal.addEventListener('abort', onTimeout, { once: true })
  raw.on('error', onRequestError)
  // A client that goes away mid-body: Node closes the request without an error in some versions.
  const onAborted = () => fail(new Error('The client closed the connection before the body was complete'))
  raw.on('aborted', onAborted)
  raw.pipe(source)

  let total = 0
  try {
    for await (const chunk of source) {
      const buffer = chunk as Buffer
      total += buffer.length
      if (total > limits.maxBytes) throw new PayloadTooLargeError(`The body is larger than ${limits.maxBytes} bytes (after decompression)`)
      yield buffer
    }
  } catch (error) {
    if (gzipped && isZlibError(error)) throw new BadRequestError(`The gzip body is corrupt: ${(error as Error).message}`)
    throw error
  } finally {
    signal.removeEventListener('abort', onTimeout)
    raw.off('error', onRequestError)
    raw.off('aborted', onAborted)
    raw.unpipe(source)
    source.destroy()
  }
}

function isZlibError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return typeof code === 'string' && code.startsWith('Z_')
}
