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

/**
 * A change the platform interface takes only with the platform credential (X-Auth-Token: PUT /sites,
 * POST …/channels/{id}/release) takes a session signed in with it here too; a personal access token's is refused.
 */
export function requirePlatformCredential(request: FastifyRequest, what: string, asTheApi: string): void {
  if (!request.consoleSession?.credentialId.startsWith('platform:')) {
    throw new AppError(403, `${what} takes a sign-in with the platform credential (X-Auth-Token), as ${asTheApi} does`, 'forbidden')
  }
}

/** Whether the session may make such changes (the forms for them are shown only then). */
export function signedInWithPlatformCredential(session: { credentialId: string } | undefined): boolean {
  return session?.credentialId.startsWith('platform:') === true
}
