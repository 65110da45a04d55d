import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { BadRequestError, UnsupportedMediaTypeError } from '../errors.js'
import { MAX_JSON_BODY_BYTES, readJsonBody } from '../http/json-body.js'
import { IdempotencyHeaders, answerOnce } from '../http/idempotent-answer.js'
import { noteBodyDigest } from '../http/request-digest.js'
import { PageLinks, StreamResource, jsonApiErrors, pageLinks, streamResource } from './json-api.js'
import type { StreamDeps } from './deps.js'
import { createStream, deleteStream, getStream, listStreams, renameStream, type StreamInput } from '../streams/streams.js'
import { accountOf } from '../auth/caller.js'

const StreamDocumentBody = Type.Object({
  data: Type.Object({
    // Not Type.Literal('stream'): streamInput says what was sent instead (`data.type: must be "stream" (got "x")`).
    type: Type.Optional(Type.String()),
    id: Type.Optional(Type.Union([Type.String(), Type.Integer()])),
    // name and type are read by createStream and renameStream (streams.ts): an unknown type is a 422 there, not a 400.
    attributes: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    relationships: Type.Optional(Type.Unknown()),
  }),
  relationships: Type.Optional(Type.Unknown()),
})
type StreamDocument = typeof StreamDocumentBody.static

const StreamParams = Type.Object({ streamId: Type.String() })
export const PageQuery = Type.Object({
  'page[offset]': Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })),
  'page[limit]': Type.Optional(Type.Integer({ minimum: 1, default: 10 })),
})
export const MAX_PAGE = 10
const errors = jsonApiErrors(400, 401, 404, 429, 500)
const writeErrors = { ...errors, ...jsonApiErrors(409, 413, 415, 422) }
const tags = ['streams']
const StreamDoc = Type.Object({ data: StreamResource })
const StreamList = Type.Object({ data: Type.Array(StreamResource), links: PageLinks, meta: Type.Object({ total: Type.Integer() }) })

/** A management body: a JSON:API document (application/json too); empty is none. */
async function parseManagementBody(request: FastifyRequest, body: Buffer): Promise<unknown> {
  if (body.length === 0 || (request.headers['content-encoding'] === undefined && body.toString('utf8').trim() === '')) return undefined
  const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase()
  if (type !== 'application/vnd.api+json' && type !== 'application/json') {
    throw new UnsupportedMediaTypeError('Send JSON:API documents as application/vnd.api+json (or application/json)')
  }
  noteBodyDigest(request, body)
  return readJsonBody(body, request.headers['content-encoding'])
}

export const streamRoutes: FastifyPluginAsyncTypebox<StreamDeps> = async (app, deps) => {
  const { db, config, clock } = deps
  const prefix = config.STREAM_PREFIX
  // Management bodies are JSON:API documents; application/json is accepted too. A body-less DELETE
  // with a JSON:API Content-Type is fine (docs/compatibility.md).
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_JSON_BODY_BYTES }, parseManagementBody)

  app.post(
    '/streams',
    { schema: { operationId: 'createStream', tags, headers: IdempotencyHeaders, body: StreamDocumentBody, response: { 201: StreamDoc, ...writeErrors } } },
    async (request, reply) =>
      answerOnce(request, reply, deps, {
        run: () => createStream(db, accountOf(request), streamInput(request.body), clock()),
        render: (stream) => ({ status: 201, headers: { location: `${prefix}/streams/${stream.id}` }, body: { data: streamResource(stream, prefix) } }),
      }),
  )

  app.get(
    '/streams',
    {
      schema: { operationId: 'listStreams', tags, querystring: PageQuery, response: { 200: StreamList, ...errors } },
    },
    async (request) => {
      const offset = request.query['page[offset]'] ?? 0
      const limit = Math.min(request.query['page[limit]'] ?? MAX_PAGE, MAX_PAGE)
      const { streams, total } = await listStreams(db, accountOf(request), offset, limit)
      return { data: streams.map((s) => streamResource(s, prefix)), links: pageLinks(`${prefix}/streams`, offset, limit, total), meta: { total } }
    },
  )

  app.get(
    '/streams/:streamId',
    { schema: { operationId: 'getStream', tags, params: StreamParams, response: { 200: StreamDoc, ...errors } } },
    async (request) => ({
      data: streamResource(await getStream(db, accountOf(request), request.params.streamId), prefix),
    }),
  )

  app.patch(
    '/streams/:streamId',
    { schema: { operationId: 'updateStream', tags, params: StreamParams, body: StreamDocumentBody, response: { 200: StreamDoc, ...writeErrors } } },
    async (request) => {
      const input = { ...streamInput(request.body), id: request.body.data.id }
      return { data: streamResource(await renameStream(db, accountOf(request), request.params.streamId, input, clock()), prefix) }
    },
  )

  app.delete(
    '/streams/:streamId',
    { schema: { operationId: 'deleteStream', tags, params: StreamParams, response: { 204: Type.Null(), ...errors } } },
    async (request, reply) => {
      await deleteStream(db, accountOf(request), request.params.streamId, clock())
      return reply.code(204).send(null)
    },
  )
}

/** Reads a stream document; the account may be named in data.relationships or top-level relationships. */
function streamInput(document: StreamDocument): StreamInput {
  const { data } = document
  if (data.type !== undefined && data.type !== 'stream') throw new BadRequestError(`data.type: must be "stream" (got "${data.type}")`)
  const account = accountRelationship(data.relationships) ?? accountRelationship(document.relationships)
  return { name: data.attributes?.name, type: data.attributes?.type, accountId: account }
}

function accountRelationship(relationships: unknown): string | undefined {
  const id = (relationships as { account?: { data?: { id?: unknown } } } | undefined)?.account?.data?.id
  return id === undefined || id === null ? undefined : String(id)
}
