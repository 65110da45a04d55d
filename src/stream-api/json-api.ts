import { Type } from '@sinclair/typebox'
import type { Batch, Stream } from '../db/schema.js'
import { isoSeconds } from '../streams/upload-stage.js'

export const StreamResource = Type.Object({
  type: Type.Literal('stream'),
  id: Type.String(),
  attributes: Type.Object({
    name: Type.String(),
    type: Type.String(),
    status: Type.String(),
    createdAt: Type.String(),
    updatedAt: Type.String(),
  }),
  relationships: Type.Object({ account: Type.Object({ data: Type.Object({ type: Type.Literal('account'), id: Type.String() }) }) }),
  links: Type.Object({ self: Type.String() }),
})

export function streamResource(stream: Stream, prefix: string) {
  return {
    type: 'stream' as const,
    id: stream.id,
    attributes: {
      name: stream.name,
      type: stream.type,
      status: stream.status,
      createdAt: isoSeconds(stream.created_at),
      updatedAt: isoSeconds(stream.updated_at),
    },
    relationships: { account: { data: { type: 'account' as const, id: stream.account_id } } },
    links: { self: `${prefix}/streams/${stream.id}` },
  }
}

const StageError = Type.Object({
  message: Type.String(),
  occurrences: Type.Integer(),
  example: Type.Object({ lineNumber: Type.Integer(), value: Type.String() }),
})
const Stage = Type.Object({
  completedAt: Type.String(),
  status: Type.String(),
  successCount: Type.Integer(),
  errorCount: Type.Integer(),
  errors: Type.Array(StageError),
})

export const BatchResource = Type.Object({
  type: Type.Literal('batch'),
  id: Type.String(),
  attributes: Type.Object({
    status: Type.String(),
    errorCount: Type.Integer(),
    createdAt: Type.String(),
    stages: Type.Object({ upload: Stage, processing: Type.Union([Stage, Type.Null()]) }),
  }),
  relationships: Type.Object({ stream: Type.Object({ data: Type.Object({ type: Type.Literal('stream'), id: Type.String() }) }) }),
  links: Type.Object({ self: Type.String() }),
})

export function batchResource(batch: Batch, prefix: string) {
  const processingErrors = batch.processing_stage?.errorCount ?? 0
  return {
    type: 'batch' as const,
    id: batch.id,
    attributes: {
      status: batch.status,
      errorCount: batch.upload_stage.errorCount + processingErrors,
      createdAt: isoSeconds(batch.created_at),
      stages: { upload: batch.upload_stage, processing: batch.processing_stage },
    },
    relationships: { stream: { data: { type: 'stream' as const, id: batch.stream_id } } },
    links: { self: `${prefix}/streams/${batch.stream_id}/batches/${batch.id}` },
  }
}

export const PageLinks = Type.Object({
  self: Type.String(),
  first: Type.String(),
  last: Type.String(),
  prev: Type.Optional(Type.String()),
  next: Type.Optional(Type.String()),
})

/** Top-level pagination links (strings, docs/compatibility.md) for `page[offset]` / `page[limit]` paging. */
export function pageLinks(path: string, offset: number, limit: number, total: number) {
  const at = (o: number) => `${path}?page[offset]=${o}&page[limit]=${limit}`
  const lastOffset = total === 0 ? 0 : Math.floor((total - 1) / limit) * limit
  return {
    self: at(offset),
    first: at(0),
    last: at(lastOffset),
    ...(offset > 0 ? { prev: at(Math.max(0, offset - limit)) } : {}),
    ...(offset + limit < total ? { next: at(offset + limit) } : {}),
  }
}

export const JsonApiError = Type.Object({
  errors: Type.Array(
    Type.Object({
      status: Type.String(),
      title: Type.String(),
      detail: Type.Optional(Type.String()),
      meta: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  ),
})

// What each error answer of the stream interface means (the OpenAPI document shows it; the body is
// the JSON:API `errors` array for every one).
const ERROR_MEANINGS = {
  400: 'A path, query or body value breaks a rule; `detail` names it',
  401: 'The bearer token is missing or invalid',
  403: 'The stream is `disabled`: uploads are refused and nothing is imported',
  404: 'The stream, batch or product is not in this account',
  408: 'The body arrived slower than UPLOAD_MIN_BYTES_PER_SECOND and was cut off; nothing was written',
  409: 'The name is taken (by a stream, or by one deleted less than 7 days ago), or `data.id` is not the stream in the path',
  413: 'The body is larger than MAX_UPLOAD_BYTES (200 MB) once decoded, or a JSON:API document larger than 1 MiB',
  415: 'The Content-Type (or Content-Encoding) is not one this endpoint reads',
  422: 'The document breaks a rule (name of 3 to 255 characters, type, at most 100 streams)',
  423: 'The stream is `locked` or `locked_upload`',
  429: 'Rate limit exceeded (per token and endpoint), or too many failed authentications; see Retry-After',
  500: 'Internal failure; the details are in the server log',
  503: 'The request ran past STREAM_REQUEST_TIMEOUT_MS (10 s), or the upload queue or spool is full; nothing was written',
} as const
type ErrorStatus = keyof typeof ERROR_MEANINGS

const retryAfter = { 'Retry-After': { type: 'integer', description: 'seconds to wait before trying again' } }

/** The JSON:API error answers of an operation, by status, each with what it means. */
export function jsonApiErrors<S extends ErrorStatus>(...statuses: S[]): Record<S, typeof JsonApiError> {
  const answers = {} as Record<S, typeof JsonApiError>
  for (const status of statuses) {
    const withHeaders = status === 429 || status === 503 ? { headers: retryAfter } : {}
    answers[status] = Type.Object(JsonApiError.properties, { description: ERROR_MEANINGS[status], ...withHeaders })
  }
  return answers
}
