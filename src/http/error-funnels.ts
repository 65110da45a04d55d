import { randomUUID } from 'node:crypto'
import type { Duplex } from 'node:stream'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { AppError, retryAfterOf } from '../errors.js'
import { statusTitle, toClientError } from './http-errors.js'

// Every error answer of the service is built here, in the body of the interface it belongs to:
// `{success:false,message}` for the platform interface and the feed files, JSON:API `errors` for the
// stream interface. Each interface's error handler, its "no route" answer, and the answers given
// before routing (framework and HTTP parser errors) go through the same two funnels.

export const JSON_API = 'application/vnd.api+json'

export function platformErrorBody(message: string): { success: false; message: string } {
  return { success: false, message }
}

export function streamErrorBody(statusCode: number, message: string, meta?: Record<string, unknown>) {
  const title = statusTitle(statusCode)
  // A rate-limit 429 is the body docs/interface.md shows; other 429s (uploads in flight) say why.
  if (statusCode === 429 && message === title) return { errors: [{ status: '429', title }] }
  return { errors: [{ status: String(statusCode), title, detail: message, ...(meta ? { meta } : {}) }] }
}

/** The 404 of a path no route of an interface matches. */
export function noRoute(request: FastifyRequest): AppError {
  return new AppError(404, `No route ${request.method} ${request.url.split('?')[0]}`, 'not_found')
}

/** The platform interface's (and the feed route's) error funnel. */
export function sendPlatformError(thrown: unknown, request: FastifyRequest, reply: FastifyReply, what = 'platform request') {
  const { statusCode, message } = toClientError(thrown)
  if (statusCode >= 500) request.log.error({ err: thrown }, `${what} failed`)
  setRetryAfter(thrown, reply)
  return reply.code(statusCode).send(platformErrorBody(message))
}

/** The stream interface's error funnel. A 503 is a deadline, not a fault: it is not logged as one. */
export function sendStreamError(thrown: unknown, request: FastifyRequest, reply: FastifyReply) {
  const { statusCode, message, error } = toClientError(thrown)
  if (statusCode >= 500 && statusCode !== 503) request.log.error({ err: thrown }, 'stream request failed')
  setRetryAfter(thrown, reply)
  return reply
    .code(statusCode)
    .type(JSON_API)
    .send(streamErrorBody(statusCode, message, error?.meta))
}

function setRetryAfter(thrown: unknown, reply: FastifyReply): void {
  const seconds = retryAfterOf(thrown)
  if (seconds !== undefined) reply.header('retry-after', seconds)
}

// Before routing, only the path tells which interface a request was meant for.
const CONSOLE_PATH = /^\/console(\/|\?|$)/

function isPlatformPath(path: string): boolean {
  return /^\/(platform|product|feeds)\//.test(path)
}

/** Sends a refusal as an HTML page (the console's). */
export type HtmlErrorPage = (refused: AppError, request: FastifyRequest, reply: FastifyReply) => unknown

/**
 * Errors before routing (a URL that does not decode, e.g. an encoded lone surrogate; a path segment
 * past the router's limit): under /console as `consolePage`, otherwise in the error body of the API.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply, consolePage: HtmlErrorPage): void {
  const status = typeof error.statusCode === 'number' && error.statusCode < 500 ? error.statusCode : 400
  // Refused before any route's hooks: the answer names its request here (a path too long, say).
  reply.header('x-request-id', request.id)
  const message = error.code === 'FST_ERR_BAD_URL' ? 'The URL is not valid: a percent-encoded sequence does not decode to text' : error.message
  // A message may quote the URL; a 5 KB path is not sent back whole.
  const refused = new AppError(status, message.length > 300 ? `${message.slice(0, 300)}…` : message, 'bad_request')
  if (CONSOLE_PATH.test(request.url)) void consolePage(refused, request, reply)
  else if (isPlatformPath(request.url)) void sendPlatformError(refused, request, reply)
  else void sendStreamError(refused, request, reply)
}

/**
 * Requests Node's HTTP parser refuses (headers or URL past 16 KB, a broken Content-Length) never
 * reach Fastify: they are answered on the socket, in the body of the interface they were meant for.
 */
export function answerClientError(
  error: Error & { code?: string; rawPacket?: unknown },
  socket: Duplex,
  { streamPrefix, consolePage }: { streamPrefix: string; consolePage: (status: number, message: string) => string },
): void {
  if (!socket.writable) return
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
  const message =
    status === 431
      ? 'The request line and headers are larger than 16 KB; a query parameter that long (a filter, say) cannot be valid'
      : `The request is not valid HTTP (${error.code ?? 'parse error'}); check its Content-Length and Transfer-Encoding`
  // Node's types call it a JSON form of a buffer; at run time it is the Buffer of what arrived.
  const received = Buffer.isBuffer(error.rawPacket) ? error.rawPacket.subarray(0, 2048).toString('latin1') : ''
  const path = /^[A-Z]+ (\S*)/.exec(received)?.[1] ?? ''
  const stream = path.startsWith(`${streamPrefix}/streams`)
  const forConsole = CONSOLE_PATH.test(path)
  const body = forConsole ? consolePage(status, message) : JSON.stringify(stream ? streamErrorBody(status, message) : platformErrorBody(message))
  const type = forConsole ? 'text/html; charset=utf-8' : stream ? JSON_API : 'application/json; charset=utf-8'
  const head =
    `HTTP/1.1 ${status} ${statusTitle(status)}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${randomUUID()}\r\nConnection: close`
  socket.end(`${head}\r\n\r\n${body}`)
}
