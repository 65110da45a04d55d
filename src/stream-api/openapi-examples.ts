import type { ErrorExamples, Example } from '../http/openapi.js'

// Example values of the stream interface for the OpenAPI document (/docs): JSON:API documents, ids
// as strings, timestamps ISO 8601 with offset and no fraction. Stream 1 of account 1 throughout.

const BATCH_ID = '3f2b8c1e-6a4d-4e9b-b0c7-1d5e9f8a2b64'

export const stream = {
  type: 'stream',
  id: '1',
  attributes: { name: 'main catalog', type: 'chunked', status: 'active', createdAt: '2026-11-21T16:40:12+00:00', updatedAt: '2026-11-21T16:40:12+00:00' },
  relationships: { account: { data: { type: 'account', id: '1' } } },
  links: { self: '/streams/1' },
}

const referenced = {
  ...stream,
  id: '2',
  attributes: { ...stream.attributes, name: 'full catalog export', type: 'referenced' },
  links: { self: '/streams/2' },
}

const uploadStage = (successCount: number, errors: { message: string; occurrences: number; example: { lineNumber: number; value: string } }[]) => ({
  completedAt: '2026-11-21T16:45:03+00:00',
  status: errors.length === 0 ? 'success' : successCount === 0 ? 'failure' : 'warning',
  successCount,
  errorCount: errors.reduce((sum, error) => sum + error.occurrences, 0),
  errors,
})

/** A batch document with the given upload stage. */
export function batch(status: string, upload: ReturnType<typeof uploadStage>, processing: unknown = null) {
  return {
    data: {
      type: 'batch',
      id: BATCH_ID,
      attributes: { status, errorCount: upload.errorCount, createdAt: '2026-11-21T16:45:02+00:00', stages: { upload, processing } },
      relationships: { stream: { data: { type: 'stream', id: '1' } } },
      links: { self: `/streams/1/batches/${BATCH_ID}` },
    },
  }
}

export const accepted = batch('uploaded', uploadStage(2, []))
export const partial = batch(
  'uploaded',
  uploadStage(1, [
    { message: 'Control character error, possibly incorrectly encoded', occurrences: 1, example: { lineNumber: 2, value: '{"id":"SKU2","title":"Socks' } },
    { message: 'Missing "id" attribute', occurrences: 1, example: { lineNumber: 3, value: '{"title":"no id"}' } },
  ]),
)
export const empty = batch('failed', uploadStage(0, [{ message: 'Empty Payload', occurrences: 1, example: { lineNumber: 1, value: '' } }]))
export const processed = batch('processed', uploadStage(2, []), {
  completedAt: '2026-11-21T19:40:02+00:00',
  status: 'success',
  successCount: 2,
  errorCount: 0,
  errors: [],
})
export const deletion = batch('uploaded', uploadStage(1, []))

export const streamDocument = { data: stream }
export const streamList = {
  data: [stream, referenced],
  links: { self: '/streams?page[offset]=0&page[limit]=10', first: '/streams?page[offset]=0&page[limit]=10', last: '/streams?page[offset]=0&page[limit]=10' },
  meta: { total: 2 },
}
export const batchList = {
  data: [
    processed.data,
    { ...partial.data, id: '9a7c3e51-2b8d-4f60-a1e4-7c9b0d2f3a18', links: { self: '/streams/1/batches/9a7c3e51-2b8d-4f60-a1e4-7c9b0d2f3a18' } },
  ],
  links: {
    self: '/streams/1/batches?page[offset]=0&page[limit]=10',
    first: '/streams/1/batches?page[offset]=0&page[limit]=10',
    last: '/streams/1/batches?page[offset]=0&page[limit]=10',
  },
  meta: { total: 2 },
}

const error = (summary: string, status: number, title: string, detail?: string): Example => ({
  summary,
  value: { errors: [{ status: String(status), title, ...(detail !== undefined && { detail }) }] },
})

/** The stream interface's JSON:API error body for each status, unless an operation gives its own. */
export const streamErrorExamples: ErrorExamples = {
  400: error('Bad request', 400, 'Bad Request', 'page[limit]: must be >= 1'),
  401: error('Missing or invalid token', 401, 'Unauthorized', 'A valid personal access token is required: Authorization: Bearer <token>'),
  403: error('Stream disabled', 403, 'Forbidden', 'Stream 1 is disabled and accepts no data'),
  404: error('Not found', 404, 'Not Found', 'Stream 9 not found'),
  408: error(
    'Body too slow',
    408,
    'Request Timeout',
    'The body arrived slower than 16384 bytes per second (UPLOAD_MIN_BYTES_PER_SECOND) and was cut off; nothing was written',
  ),
  409: error('Name taken', 409, 'Conflict', 'A stream named "main catalog" already exists'),
  413: error('Body too large', 413, 'Payload Too Large', 'The body is larger than 200000000 bytes (after decompression)'),
  415: error(
    'Wrong content type',
    415,
    'Unsupported Media Type',
    'A chunked stream accepts application/x-ndjson here; the request has Content-Type application/json',
  ),
  422: error('Invalid name', 422, 'Unprocessable Entity', 'name: must be 3 to 255 characters long (got 2)'),
  423: error('Stream locked', 423, 'Locked', 'Stream 1 is locked_upload and accepts no uploads'),
  429: error('Rate limit', 429, 'Too Many Requests'),
  500: error('Internal failure', 500, 'Internal Server Error', 'Internal Server Error'),
  503: error('Timeout', 503, 'Service Unavailable', 'The request took longer than 10000 ms and was cancelled; nothing was written'),
}

/** Descriptions of the stream interface's tags. */
export const streamTags = [
  {
    name: 'streams',
    description:
      'Streams receive product data. Stream interface: `Authorization: Bearer <personal access token>`, JSON:API documents ' +
      '(`application/vnd.api+json`), `errors` arrays, `ratelimit-*` headers on every answer.',
  },
  { name: 'products', description: 'Uploads and deletes of product rows: each request becomes one batch.' },
  { name: 'batches', description: 'What became of each upload: its upload stage, and its processing stage once an import applied it.' },
]
