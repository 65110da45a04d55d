import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'
import type { Html } from './html.js'
import './console-types.js'

/** The account of the signed-in session (the guard let only such requests through). */
export function accountOfSession(request: FastifyRequest): string {
  const accountId = request.consoleSession?.accountId
  if (!accountId) throw new AppError(401, 'Sign in first', 'unauthorized')
  return accountId
}

export function sendPage(reply: FastifyReply, body: Html, status = 200) {
  return reply.code(status).type('text/html; charset=utf-8').send(body.text)
}

/** A non-negative integer query parameter, or `fallback` when absent or not one. */
export function queryInt(value: unknown, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const number = typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : fallback
  return Math.min(number, max)
}

/** A query parameter as text: the first value when repeated, cut to `max` characters. */
export function queryText(value: unknown, max = 1000): string {
  const text = Array.isArray(value) ? value[0] : value
  return typeof text === 'string' ? text.slice(0, max) : ''
}
