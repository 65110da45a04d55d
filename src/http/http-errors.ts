import type { FastifyError } from 'fastify'
import { sqlState } from '../db/errors.js'
import { AppError } from '../errors.js'
import { validationMessage } from './validation-message.js'

export interface ClientFacingError {
  statusCode: number
  message: string
  error?: AppError
}

/**
 * Sorts any thrown value into what a client may see: AppErrors and Fastify's own 4xx errors
 * (validation, body too large, bad media type) keep their message; everything else is a 500 whose
 * text stays in the log. Both interfaces' error handlers start here.
 */
export function toClientError(thrown: unknown): ClientFacingError {
  if (thrown instanceof AppError) return { statusCode: thrown.statusCode, message: thrown.message, error: thrown }
  const error = thrown as FastifyError
  if (error?.validation) {
    return { statusCode: 400, message: validationMessage(error.validation, error.validationContext) }
  }
  if (typeof error?.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return { statusCode: error.statusCode, message: error.message }
  }
  const refused = DATABASE_REFUSALS.get(sqlState(thrown) ?? '')
  if (refused) return { statusCode: 400, message: refused }
  return { statusCode: 500, message: 'Internal Server Error' }
}

// The last line of defence: values every input check should have caught before the database, which
// refuses them for what they are. Still the client's mistake, so a 400, not a 500.
const DATABASE_REFUSALS = new Map([
  ['22021', 'The request holds text the database cannot store (a NUL character, \\u0000, or an invalid byte sequence)'],
  ['22P05', 'The request holds text the database cannot store (a NUL character, \\u0000)'],
  ['54000', 'A value in the request is too large for the database to store or index; send a shorter one'],
])

// The reason phrase of each status a client can get: the JSON:API `title` and the status line.
const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  422: 'Unprocessable Entity',
  423: 'Locked',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
}

export function statusTitle(status: number): string {
  return TITLES[status] ?? 'Error'
}
