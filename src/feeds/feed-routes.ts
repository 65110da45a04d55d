import { pipeline } from 'node:stream'
import { createGzip } from 'node:zlib'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import type { Db } from '../db/database.js'
import '../http/fastify-types.js'
import { sendPlatformError } from '../http/error-funnels.js'
import { refuseNulParameters } from '../http/nul-guard.js'
import { notModified } from './conditional.js'
import { FeedContentMissingError, openPublicFeed } from './feed-files.js'
import type { FeedStorage, StoredFeed } from './feed-storage.js'

// The built-in destination: every exported file at /feeds/<token>/<filename>, without credentials
// (the token is the secret), with validators for conditional GETs and gzip on the fly.

const FeedError = Type.Object({ success: Type.Literal(false), message: Type.String() })
const FeedParams = Type.Object({ token: Type.String(), filename: Type.String() })

// The media types of the feed formats, for the OpenAPI document.
const FEED_MEDIA_TYPES = ['text/csv', 'text/tab-separated-values', 'application/x-ndjson', 'application/xml']

export const feedRoutes: FastifyPluginAsyncTypebox<{ db: Db; feedStorage: FeedStorage }> = async (app, { db, feedStorage }) => {
  app.setErrorHandler((error, request, reply) => {
    // The row says the file exists: worth a look, but the client just has no file (a 404).
    if (error instanceof FeedContentMissingError) request.log.warn({ storageKey: error.storageKey }, 'feed file missing in storage')
    return sendPlatformError(error, request, reply, 'feed request')
  })
  app.addHook('preValidation', async (request) => refuseNulParameters(request.params, 'path parameter'))

  app.route({
    method: ['GET', 'HEAD'],
    url: '/feeds/:token/:filename',
    config: { auth: 'none' },
    schema: {
      tags: ['feeds'],
      summary: 'An exported feed file (the URLs a channel lists in feed_destinations.urls)',
      security: [],
      params: FeedParams,
      response: {
        200: {
          description: 'The feed file as the last export wrote it (gzip when accepted)',
          content: Object.fromEntries(FEED_MEDIA_TYPES.map((type) => [type, { schema: { type: 'string' } }])),
        },
        304: { description: 'Not modified since the ETag or date the client has', type: 'null' },
        400: FeedError,
        404: FeedError,
        500: FeedError,
      },
    },
    handler: async (request, reply) => {
      const { file, content } = await openPublicFeed(db, feedStorage, request.params.token, request.params.filename)
      // What is sent below is not JSON, so it bypasses the typed (error-only) response schema.
      const raw = reply as FastifyReply
      try {
        const gzip = acceptsGzip(request.headers['accept-encoding'])
        // The gzip representation gets its own tag: weak (zlib may not produce the same bytes
        // forever) and suffixed, so it never matches the plain file's strong tag.
        const etag = gzip ? `W/${file.etag.replace(/"$/, '-gzip"')}` : file.etag
        reply
          .header('etag', etag)
          .header('last-modified', file.writtenAt.toUTCString())
          .header('cache-control', 'no-cache')
          .header('vary', 'Accept-Encoding')
          .header('x-content-type-options', 'nosniff')
        if (notModified(request.headers, [file.etag, etag], file.writtenAt)) {
          await content.close()
          return raw.code(304).send()
        }
        reply.header('content-type', file.contentType)
        if (gzip) reply.header('content-encoding', 'gzip')
        else reply.header('content-length', content.size)
        if (request.method === 'HEAD') {
          await content.close()
          return raw.send()
        }
        return sendContent(raw, content, gzip)
      } catch (error) {
        await content.close().catch(() => {})
        throw error
      }
    },
  })
}

function sendContent(reply: FastifyReply, content: StoredFeed, gzip: boolean) {
  // The stream owns the opened file from here and releases it when it ends or is destroyed.
  const source = content.stream()
  if (!gzip) return reply.send(source)
  // pipeline destroys both streams when one fails or the client goes away.
  const compressed = pipeline(source, createGzip(), (error) => {
    if (error && error.code !== 'ERR_STREAM_PREMATURE_CLOSE') reply.log.warn({ err: error }, 'feed gzip stream failed')
  })
  return reply.send(compressed)
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
