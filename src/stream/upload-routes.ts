import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { BadRequestError } from '../errors.js'
import { UploadDeadline } from '../streams/upload-deadline.js'
import { BatchResource, JsonApiError, batchResource } from './json-api.js'
import type { StreamDeps } from './deps.js'
import { deleteProducts, uploadProducts } from '../streams/uploads.js'
import { accountOf } from '../auth/caller.js'

const StreamParams = Type.Object({ streamId: Type.String() })
const BatchDoc = Type.Object({ data: BatchResource })
const errors = {
  400: JsonApiError,
  401: JsonApiError,
  403: JsonApiError,
  404: JsonApiError,
  408: JsonApiError,
  413: JsonApiError,
  415: JsonApiError,
  423: JsonApiError,
  429: JsonApiError,
  500: JsonApiError,
  503: JsonApiError,
}
// An empty payload answers 422 with a failed batch document (COMPAT.md); other 422s are errors.
const uploadResponses = { 202: BatchDoc, 422: Type.Union([BatchDoc, JsonApiError]), ...errors }
const tags = ['products']

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined
}

export const uploadRoutes: FastifyPluginAsyncTypebox<StreamDeps> = async (app, { db, config, clock, uploadSlots, uploadSpool, metrics }) => {
  const prefix = config.STREAM_PREFIX
  // Bodies are read as streams by the upload itself, never buffered by a parser.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined))

  // The deadline was armed when the request arrived (stream-plugin.ts); the time spent since counts.
  const deadlineOf = (request: FastifyRequest, reply: FastifyReply) =>
    UploadDeadline.of(request.deadline ?? AbortSignal.timeout(config.STREAM_REQUEST_TIMEOUT_MS), config.STREAM_REQUEST_TIMEOUT_MS, reply.elapsedTime)

  const upload = (kind: 'upsert' | 'delete') => async (request: FastifyRequest, reply: FastifyReply, streamId: string) =>
    uploadProducts(db, {
      accountId: accountOf(request),
      streamId,
      kind,
      contentType: request.headers['content-type'],
      contentEncoding: request.headers['content-encoding'],
      body: request.raw,
      deadline: deadlineOf(request, reply),
      maxBytes: config.MAX_UPLOAD_BYTES,
      maxAttributes: config.MAX_ATTRIBUTES_PER_STREAM,
      minBytesPerSecond: config.UPLOAD_MIN_BYTES_PER_SECOND,
      slots: uploadSlots,
      spool: uploadSpool,
      now: clock,
      observer: metrics,
    })

  const deleteWithoutBody = (request: FastifyRequest, reply: FastifyReply, streamId: string, productId: string | undefined) =>
    deleteProducts(db, accountOf(request), streamId, productId, clock(), deadlineOf(request, reply), uploadSlots, metrics)

  const uploadProductsRoute = upload('upsert')
  app.route({
    method: ['POST', 'PUT', 'PATCH'],
    url: '/streams/:streamId/products',
    schema: { tags, params: StreamParams, response: uploadResponses },
    handler: async (request, reply) => {
      const result = await uploadProductsRoute(request, reply, request.params.streamId)
      return reply.code(result.statusCode).send({ data: batchResource(result.batch, prefix) })
    },
  })

  const deleteLines = upload('delete')
  app.delete(
    '/streams/:streamId/products',
    { schema: { tags, params: StreamParams, querystring: Type.Object({ all: Type.Optional(Type.Boolean()) }), response: uploadResponses } },
    async (request, reply) => {
      if (request.query.all === true) {
        if (hasBody(request)) throw new BadRequestError('?all=true deletes every row and takes no body; send either ids or all=true')
        const batch = await deleteWithoutBody(request, reply, request.params.streamId, undefined)
        return reply.code(202).send({ data: batchResource(batch, prefix) })
      }
      const result = await deleteLines(request, reply, request.params.streamId)
      return reply.code(result.statusCode).send({ data: batchResource(result.batch, prefix) })
    },
  )

  app.delete(
    '/streams/:streamId/products/:productId',
    { schema: { tags, params: Type.Object({ streamId: Type.String(), productId: Type.String() }), response: { 202: BatchDoc, ...errors } } },
    async (request, reply) => {
      const { streamId, productId } = request.params
      const batch = await deleteWithoutBody(request, reply, streamId, productId)
      return reply.code(202).send({ data: batchResource(batch, prefix) })
    },
  )
}
