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

/** Top-level pagination links (strings, COMPAT.md) for `page[offset]` / `page[limit]` paging. */
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
