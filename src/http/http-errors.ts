import type { FastifyError } from 'fastify'
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
  return { statusCode: 500, message: 'Internal Server Error' }
}
