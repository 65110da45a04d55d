import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ConnectionSlots } from '../db/connection-slots.js'
import type { Db } from '../db/database.js'
import { AppError } from '../errors.js'
import '../auth/caller.js'
import { sendPlatformError } from '../http/error-funnels.js'
import { refuseNulParameters } from '../http/nul-guard.js'
import { rangeOf } from './byte-range.js'
import { notModified } from './conditional.js'
import { FeedContentMissingError, openPublicFeed, type PublicFeedFile } from '../feeds/feed-files.js'
import { accountQueueGate } from '../feeds/feed-materialiser.js'
import type { ByteRange, FeedStorage, StoredFeed } from '../feeds/feed-storage.js'

// The built-in destination: every exported file at /feeds/<token>/<filename>, without credentials
// (the token is the secret), with validators for conditional GETs, single byte ranges, and the
// gzip representation the export stored.

const feedError = (description: string) => Type.Object({ success: Type.Literal(false), message: Type.String() }, { description })
const FeedParams = Type.Object({ token: Type.String(), filename: Type.String() })

// The media types of the feed formats, for the OpenAPI document.
const FEED_MEDIA_TYPES = ['text/csv', 'text/tab-separated-values', 'application/x-ndjson', 'application/xml']

// How long a first download waits for a read slot before it is answered 429.
const SLOT_WAIT_MS = 30_000

// The route's OpenAPI description; its responses other than 200, 206 and 304 carry the platform body.
const FEED_FILE_SCHEMA = {
  operationId: 'getFeedFile',
  tags: ['feeds'],
  summary: 'Download an exported feed file',
  description:
    'The files of the built-in destination, at the URLs a channel lists in `feed_destinations.*.urls`: no credentials, the ' +
    'token in the URL is the secret. Gzip when the client accepts it, `ETag` and `Last-Modified` for conditional requests ' +
    '(304), one byte range per request (206, 416 outside the file). A full file is written on its first download after an ' +
    'export: an identity download of the whole file is served from the channel stage as it is read, others wait for the file. ' +
    '`HEAD` answers the headers of `GET`.',
  security: [],
  params: FeedParams,
  response: {
    200: {
      description: 'The feed file as the last export wrote it (gzip when accepted)',
      content: Object.fromEntries(FEED_MEDIA_TYPES.map((type) => [type, { schema: { type: 'string' } }])),
    },
    206: {
      description: 'One byte range (Range: bytes=first-last, first-, or -suffix) of the representation served',
      content: Object.fromEntries(FEED_MEDIA_TYPES.map((type) => [type, { schema: { type: 'string' } }])),
    },
    304: { description: 'Not modified since the ETag or date the client has', type: 'null' },
    400: feedError('A path parameter breaks a rule (a NUL, too long)'),
    404: feedError('No such feed file: an unknown token or file name, or a file removed by a later export'),
    416: feedError('The range lies outside the file (Content-Range: bytes */<size>)'),
    429: feedError("The account's first downloads waited 30 s for a read slot; retry after Retry-After"),
    500: feedError('Internal failure; the details are in the server log'),
  },
}

export const feedRoutes: FastifyPluginAsyncTypebox<{ db: Db; feedStorage: FeedStorage; readSlots: ConnectionSlots }> = async (
  app,
  { db, feedStorage, readSlots },
) => {
  // Writing a full file on its first download holds a connection: it takes one of the account's read slots.
  const gate = accountQueueGate(readSlots, SLOT_WAIT_MS)
  app.setErrorHandler((error, request, reply) => {
    // The row says the file exists: worth a look, but the client just has no file (a 404).
    if (error instanceof FeedContentMissingError) {
      request.log.warn({ storageKey: error.storageKey, encoding: error.encoding }, 'feed file missing in storage')
    }
    return sendPlatformError(error, request, reply, 'feed request')
  })
  app.addHook('preValidation', async (request) => refuseNulParameters(request.params, 'path parameter'))

  app.route({
    method: ['GET', 'HEAD'],
    url: '/feeds/:token/:filename',
    config: { auth: 'none' },
    schema: FEED_FILE_SCHEMA,
    handler: async (request, reply) => {
      const gzip = acceptsGzip(request.headers['accept-encoding'])
      const { token, filename } = request.params
      // A whole identity body is certain to be sent: a GET without a range, and without validators that may answer 304.
      const { range, 'if-none-match': ifNoneMatch, 'if-modified-since': ifModifiedSince } = request.headers
      const whole = request.method === 'GET' && range === undefined && ifNoneMatch === undefined && ifModifiedSince === undefined
      const { file, content } = await openPublicFeed(db, feedStorage, { token, filename, encoding: gzip ? 'gzip' : 'identity', gate, whole })
      try {
        // What is sent is not JSON, so it bypasses the typed (error-only) response schema.
        return await sendFeedFile(request, reply as FastifyReply, { file, content, gzip })
      } catch (error) {
        await content.close().catch(() => {})
        throw error
      }
    },
  })
}

/** The opened file with its validators: 304, 416, the whole file or one range of it. */
async function sendFeedFile(
  request: FastifyRequest,
  reply: FastifyReply,
  { file, content, gzip }: { file: PublicFeedFile; content: StoredFeed; gzip: boolean },
) {
  // Each representation has its own tag, so a cache never takes one for the other. The stored gzip
  // file is the same bytes on every download: a strong tag.
  const etag = gzip ? file.etag.replace(/"$/, '-gzip"') : file.etag
  reply
    .header('etag', etag)
    .header('last-modified', file.writtenAt.toUTCString())
    .header('cache-control', 'no-cache')
    .header('vary', 'Accept-Encoding')
    .header('x-content-type-options', 'nosniff')
    .header('accept-ranges', 'bytes')
  if (notModified(request.headers, [file.etag, etag], file.writtenAt)) {
    await content.close()
    return reply.code(304).send()
  }
  reply.header('content-type', file.contentType)
  if (gzip) reply.header('content-encoding', 'gzip')
  const wanted = rangeOf(request.headers, content.size, [etag], file.writtenAt)
  if (wanted.kind === 'unsatisfiable') {
    await content.close()
    reply.header('content-range', `bytes */${content.size}`).removeHeader('content-encoding').removeHeader('content-type')
    throw new AppError(416, `The range ${request.headers.range} is outside the file's ${content.size} bytes`, 'range_not_satisfiable')
  }
  if (wanted.kind === 'whole') {
    reply.header('content-length', content.size)
    return sendBody(reply, request.method, content)
  }
  const { start, end } = wanted.range
  reply
    .code(206)
    .header('content-range', `bytes ${start}-${end}/${content.size}`)
    .header('content-length', end - start + 1)
  return sendBody(reply, request.method, content, wanted.range)
}

/** The body of a GET (whole or a range); a HEAD gets the same headers and none. */
async function sendBody(reply: FastifyReply, method: string, content: StoredFeed, range?: ByteRange) {
  if (method === 'HEAD') {
    await content.close()
    return reply.send()
  }
  // The stream owns the opened file from here and releases it when it ends or is destroyed.
  return reply.send(content.stream(range))
}

/** Whether the client takes gzip: listed (or `*`) without q=0. */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false
  let star: boolean | undefined
  for (const part of header.split(',')) {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';')
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    const accepted = q === undefined || Number(q.slice(2)) > 0
    if (coding.trim() === 'gzip' || coding.trim() === 'x-gzip') return accepted
    if (coding.trim() === '*') star = accepted
  }
  return star === true
}
