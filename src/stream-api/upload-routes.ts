import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { BadRequestError } from '../errors.js'
import { UploadDeadline } from '../streams/upload-deadline.js'
import { BatchResource, JsonApiError, batchResource, jsonApiErrors } from './json-api.js'
import type { StreamDeps } from './deps.js'
import { deleteProducts, uploadProducts } from '../streams/uploads.js'
import { accountOf } from '../auth/caller.js'
import { UPLOAD_STATUS, allUploadObservers, uploadLog } from './upload-log.js'
import { IdempotencyHeaders, answerOnce } from '../http/idempotent-answer.js'
import type { Batch } from '../db/schema.js'
import type { UploadResult } from '../streams/upload-result.js'

const StreamParams = Type.Object({ streamId: Type.String() })
const BatchDoc = Type.Object({ data: BatchResource })
const errors = jsonApiErrors(400, 401, 403, 404, 408, 413, 415, 423, 429, 500, 503)
// An empty payload answers 422 with a failed batch document (docs/compatibility.md); other 422s are errors.
const emptyPayload = Type.Union([BatchDoc, JsonApiError], { description: 'The body is empty (a failed batch document), or a row limit is passed' })
const uploadResponses = { 202: BatchDoc, 422: emptyPayload, ...errors }
const tags = ['products']
const DeleteQuery = Type.Object({ all: Type.Optional(Type.Boolean({ description: 'true deletes every row of the stream; send no body then' })) })
const ProductParams = Type.Object({ streamId: Type.String(), productId: Type.String({ description: 'the `id` of the row' }) })

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined
}

/** The routes' calls into the domain: the deps, and the request's deadline and log. */
function uploadCalls({ db, config, clock, uploadSlots, uploadSpool, metrics }: StreamDeps) {
  // The deadline was armed when the request arrived (stream-plugin.ts); the time spent since counts.
  const deadlineOf = (request: FastifyRequest, reply: FastifyReply) =>
    UploadDeadline.of(request.deadline ?? AbortSignal.timeout(config.STREAM_REQUEST_TIMEOUT_MS), config.STREAM_REQUEST_TIMEOUT_MS, reply.elapsedTime)

  // Every upload is counted and logged; on the request's logger, its line carries the request's id.
  const observerOf = (request: FastifyRequest) => allUploadObservers(metrics, uploadLog(request.log))

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
      observer: observerOf(request),
    })

  const deleteWithoutBody = (request: FastifyRequest, reply: FastifyReply, streamId: string, productId: string | undefined) =>
    deleteProducts(db, {
      accountId: accountOf(request),
      streamId,
      productId,
      now: clock(),
      deadline: deadlineOf(request, reply),
      slots: uploadSlots,
      observer: observerOf(request),
    })

  return { upload, deleteWithoutBody }
}

export const uploadRoutes: FastifyPluginAsyncTypebox<StreamDeps> = async (app, deps) => {
  const prefix = deps.config.STREAM_PREFIX
  const { upload, deleteWithoutBody } = uploadCalls(deps)
  // Bodies are read as streams by the upload itself, never buffered by a parser.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined))

  // Every write here may carry an Idempotency-Key; an upload claims it once its body has arrived.
  const uploaded = (result: UploadResult) => ({ status: UPLOAD_STATUS[result.outcome], body: { data: batchResource(result.batch, prefix) } })
  const accepted = (batch: Batch) => ({ status: 202, body: { data: batchResource(batch, prefix) } })

  const uploadProductsRoute = upload('upsert')
  app.route({
    method: ['POST', 'PUT', 'PATCH'],
    url: '/streams/:streamId/products',
    schema: { operationId: 'uploadProducts', tags, headers: IdempotencyHeaders, params: StreamParams, response: uploadResponses },
    handler: async (request, reply) =>
      answerOnce(request, reply, deps, { run: () => uploadProductsRoute(request, reply, request.params.streamId), render: uploaded, claimAfterBody: true }),
  })

  const deleteLines = upload('delete')
  app.delete(
    '/streams/:streamId/products',
    { schema: { operationId: 'deleteProducts', tags, headers: IdempotencyHeaders, params: StreamParams, querystring: DeleteQuery, response: uploadResponses } },
    async (request, reply) => {
      if (request.query.all === true) {
        if (hasBody(request)) throw new BadRequestError('?all=true deletes every row and takes no body; send either ids or all=true')
        return answerOnce(request, reply, deps, { run: () => deleteWithoutBody(request, reply, request.params.streamId, undefined), render: accepted })
      }
      return answerOnce(request, reply, deps, { run: () => deleteLines(request, reply, request.params.streamId), render: uploaded, claimAfterBody: true })
    },
  )

  app.delete(
    '/streams/:streamId/products/:productId',
    { schema: { operationId: 'deleteProduct', tags, headers: IdempotencyHeaders, params: ProductParams, response: { 202: BatchDoc, ...errors } } },
    async (request, reply) => {
      const { streamId, productId } = request.params
      return answerOnce(request, reply, deps, { run: () => deleteWithoutBody(request, reply, streamId, productId), render: accepted })
    },
  )
}
