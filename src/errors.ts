// One hierarchy for every failure a client can cause. Each interface's error handler maps these
// to its own body; anything that is not an AppError is an internal error whose text stays in the log.
export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly code: string,
    readonly meta?: Record<string, unknown>,
  ) {
    super(message)
    this.name = new.target.name
  }
}

export class BadRequestError extends AppError {
  constructor(message: string, meta?: Record<string, unknown>) {
    super(400, message, 'bad_request', meta)
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'Unauthorized') {
    super(401, message, 'unauthorized')
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string) {
    super(403, message, 'forbidden')
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'The requested resource could not be found') {
    super(404, message, 'not_found')
  }
}

export class ConflictError extends AppError {
  constructor(message: string, meta?: Record<string, unknown>) {
    super(409, message, 'conflict', meta)
  }
}

export class GoneError extends AppError {
  constructor(message: string) {
    super(410, message, 'gone')
  }
}

export class UnprocessableError extends AppError {
  constructor(message: string, meta?: Record<string, unknown>) {
    super(422, message, 'unprocessable', meta)
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(message: string) {
    super(413, message, 'payload_too_large')
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string) {
    super(415, message, 'unsupported_media_type')
  }
}

export class LockedError extends AppError {
  constructor(message: string) {
    super(423, message, 'locked')
  }
}

/** An error that tells the client when to try again: the funnels send it as `Retry-After`. */
export function retryAfterOf(thrown: unknown): number | undefined {
  const seconds = (thrown as { retryAfterSeconds?: unknown } | null)?.retryAfterSeconds
  return typeof seconds === 'number' ? seconds : undefined
}

export class TooManyRequestsError extends AppError {
  constructor(
    readonly retryAfterSeconds: number,
    message = 'Too Many Requests',
  ) {
    super(429, message, 'too_many_requests')
  }
}

/** An account that has READS_PER_ACCOUNT product reads (or first feed downloads) in progress already. */
export class TooManyReadsError extends TooManyRequestsError {
  constructor(inFlight: number) {
    super(1, `This account already has ${inFlight} product reads in progress, the most it may have at once (READS_PER_ACCOUNT); retry when one has finished`)
  }
}

/** A request body that arrives slower than the minimum rate: it would hold a connection for nothing. */
export class SlowBodyError extends AppError {
  constructor(minBytesPerSecond: number) {
    super(
      408,
      `The body arrived slower than ${minBytesPerSecond} bytes per second (UPLOAD_MIN_BYTES_PER_SECOND) and was cut off; nothing was written`,
      'slow_body',
    )
  }
}

export class RequestTimeoutError extends AppError {
  /** Nothing was written, so the same request may simply be sent again. */
  readonly retryAfterSeconds = 1

  constructor(limitMs: number) {
    super(503, `The request took longer than ${limitMs} ms and was cancelled; nothing was written`, 'timeout')
  }
}

/** The service cannot take the request now (a full queue or spool): nothing was written, try again later. */
export class ServiceBusyError extends AppError {
  constructor(
    readonly retryAfterSeconds: number,
    message: string,
  ) {
    super(503, message, 'busy')
  }
}

/** A product read whose query ran past PRODUCT_READ_TIMEOUT_MS: Postgres cancelled it. */
export class ReadTimeoutError extends AppError {
  constructor(timeoutMs: number, advice = 'ask for fewer rows, fewer fields or a narrower filter') {
    super(503, `The read took longer than ${timeoutMs} ms (PRODUCT_READ_TIMEOUT_MS) and was cancelled; ${advice}`, 'timeout')
  }
}

/** The client closed its connection before its answer: nobody reads this, it only stops the work. */
export class ClientClosedError extends AppError {
  constructor() {
    super(499, 'The client closed the connection before the request was answered', 'client_closed')
  }
}
