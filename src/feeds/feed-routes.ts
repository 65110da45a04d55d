import type { FileHandle } from 'node:fs/promises'
import fs from 'node:fs/promises'
import path from 'node:path'
import { pipeline } from 'node:stream'
import { createGzip } from 'node:zlib'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import type { Db } from '../db/database.js'
import '../http/fastify-types.js'
import { toClientError } from '../http/http-errors.js'
import { refuseNulParameters } from '../http/nul-guard.js'
import { notModified } from './conditional.js'

// The built-in destination: every exported file at /feeds/<token>/<filename>, without credentials
// (the token is the secret), with validators for conditional GETs and gzip on the fly.

const FeedError = Type.Object({ success: Type.Literal(false), message: Type.String() })
const FeedParams = Type.Object({ token: Type.String(), filename: Type.String() })

// The media types of the feed formats, for the OpenAPI document.
const FEED_MEDIA_TYPES = ['text/csv', 'text/tab-separated-values', 'application/x-ndjson', 'application/xml']

export const feedRoutes: FastifyPluginAsyncTypebox<{ db: Db; feedsDir: string }> = async (app, { db, feedsDir }) => {
  const root = path.resolve(feedsDir)

  // A client's mistake keeps its 4xx and message; anything else is a 500 whose text stays in the log.
  app.setErrorHandler((error, request, reply) => {
    const { statusCode, message } = toClientError(error)
    if (statusCode >= 500) request.log.error({ err: error }, 'feed request failed')
    return reply.code(statusCode).send({ success: false, message })
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
      const { token, filename } = request.params
      const file = await db
        .selectFrom('channel_destination as d')
        .innerJoin('feed_file as f', (join) => join.onRef('f.channel_id', '=', 'd.channel_id').onRef('f.account_id', '=', 'd.account_id'))
        .select(['f.storage_key', 'f.content_type', 'f.etag', 'f.written_at'])
        .where('d.token', '=', token)
        .where('d.kind', '=', 'feed')
        .where('d.active', '=', true)
        .where('f.filename', '=', filename)
        .executeTakeFirst()
      const notFound = () => reply.code(404).send({ success: false as const, message: `No feed file ${filename} at this address` })
      if (!file) return notFound()
      const filePath = path.resolve(root, file.storage_key)
      // storage_key is ours, but a path outside the feeds directory is never served.
      if (!filePath.startsWith(root + path.sep)) return notFound()
      let handle: FileHandle
      try {
        handle = await fs.open(filePath, 'r')
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          // The row says the file exists: worth a look, but the client just has no file.
          request.log.warn({ storageKey: file.storage_key }, 'feed file missing on disk')
          return notFound()
        }
        throw error
      }
      // What is sent below is not JSON, so it bypasses the typed (error-only) response schema.
      const raw = reply as FastifyReply
      try {
        const { size } = await handle.stat()
        const gzip = acceptsGzip(request.headers['accept-encoding'])
        // The gzip representation gets its own tag: weak (zlib may not produce the same bytes
        // forever) and suffixed, so it never matches the plain file's strong tag.
        const etag = gzip ? `W/${file.etag.replace(/"$/, '-gzip"')}` : file.etag
        reply
          .header('etag', etag)
          .header('last-modified', file.written_at.toUTCString())
          .header('cache-control', 'no-cache')
          .header('vary', 'Accept-Encoding')
          .header('x-content-type-options', 'nosniff')
        if (notModified(request.headers, [file.etag, etag], file.written_at)) {
          await handle.close()
          return raw.code(304).send()
        }
        reply.header('content-type', file.content_type)
        if (gzip) reply.header('content-encoding', 'gzip')
        else reply.header('content-length', size)
        if (request.method === 'HEAD') {
          await handle.close()
          return raw.send()
        }
        return sendFile(raw, handle, gzip)
      } catch (error) {
        await handle.close().catch(() => {})
        throw error
      }
    },
  })
}

function sendFile(reply: FastifyReply, handle: FileHandle, gzip: boolean) {
  // The stream owns the handle from here and closes it when it ends or is destroyed.
  const source = handle.createReadStream()
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
