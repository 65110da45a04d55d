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
