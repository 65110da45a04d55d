import { PassThrough, type Readable, type Transform } from 'node:stream'
import { BadRequestError, ClientClosedError, PayloadTooLargeError, SlowBodyError, UnsupportedMediaTypeError, type AppError } from '../errors.js'
import { SniffingInflate } from './sniffing-inflate.js'

export interface BodyLimits {
  maxBytes: number
  /** Aborts at the request's deadline: reading stops, but the socket stays open for the 503. */
  deadline: { readonly signal: AbortSignal; readonly reason: AppError }
  /** Below this rate (after a grace period) the body is cut off with a 408; 0: no minimum. */
  minBytesPerSecond: number
}

// The rate is judged once the body has been waited for this long: a client may pause briefly.
const RATE_GRACE_MS = 2000
const RATE_CHECK_MS = 250

/**
 * The request body as decoded chunks: gunzipped as a stream when announced, and cut off with a 413
 * once more than `maxBytes` have come out, so that neither a large body nor a gzip bomb can pass.
 */
export async function* decodedBody(raw: Readable, contentEncoding: string | undefined, limits: BodyLimits): AsyncGenerator<Buffer> {
  const encoding = (contentEncoding ?? 'identity').trim().toLowerCase()
  const gzipped = encoding === 'gzip' || encoding === 'x-gzip' || encoding === 'deflate'
  if (!gzipped && encoding !== 'identity' && encoding !== '') {
    throw new UnsupportedMediaTypeError(`Content-Encoding ${encoding} is not supported; send gzip, deflate or an uncompressed body`)
  }
  // A client gone before its body is read (while the upload waited for the database, say) has had
  // its 'aborted' and 'close' already: piping it would wait forever, holding the transaction.
  if (raw.destroyed || raw.readableAborted || raw.errored) throw new ClientClosedError()
  const { signal } = limits.deadline
  // The body is read through a stream of our own, piped from the request: at the deadline it is
  // unpiped and destroyed, which ends the loop below while the socket stays usable for the answer.
  const source: Transform = gzipped ? new SniffingInflate() : new PassThrough()
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
  const rate = new BodyRate(limits.minBytesPerSecond, () => fail(new SlowBodyError(limits.minBytesPerSecond)))
  raw.on('data', rate.received)

  let total = 0
  try {
    for await (const chunk of source) {
      rate.arrived()
      const buffer = chunk as Buffer
      total += buffer.length
      if (total > limits.maxBytes) throw new PayloadTooLargeError(`The body is larger than ${limits.maxBytes} bytes (after decompression)`)
      yield buffer
      rate.waiting()
    }
  } catch (error) {
    if (gzipped && isZlibError(error)) throw new BadRequestError(`The ${encoding} body is corrupt: ${(error as Error).message}`)
    throw error
  } finally {
    rate.stop()
    raw.off('data', rate.received)
    signal.removeEventListener('abort', onTimeout)
    raw.off('error', onRequestError)
    raw.off('aborted', onAborted)
    raw.unpipe(source)
    source.destroy()
  }
}

/**
 * Whether the body keeps up the minimum rate. Only the time spent waiting for the client counts:
 * while the upload writes to the database, the body is paused by our own backpressure, which is no
 * fault of the client's.
 */
class BodyRate {
  private bytes = 0
  private waited = 0
  private waitingSince: number | undefined = performance.now()
  private readonly timer: NodeJS.Timeout | undefined

  constructor(
    private readonly minBytesPerSecond: number,
    tooSlow: () => void,
  ) {
    if (minBytesPerSecond <= 0) return
    this.timer = setInterval(() => {
      const waited = this.waited + (this.waitingSince === undefined ? 0 : performance.now() - this.waitingSince)
      if (waited >= RATE_GRACE_MS && this.bytes < (this.minBytesPerSecond * waited) / 1000) {
        this.stop()
        tooSlow()
      }
    }, RATE_CHECK_MS)
    this.timer.unref()
  }

  readonly received = (chunk: Buffer): void => {
    this.bytes += chunk.length
  }

  arrived(): void {
    if (this.waitingSince !== undefined) this.waited += performance.now() - this.waitingSince
    this.waitingSince = undefined
  }

  waiting(): void {
    this.waitingSince = performance.now()
  }

  stop(): void {
    clearInterval(this.timer)
  }
}

function isZlibError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return typeof code === 'string' && code.startsWith('Z_')
}
