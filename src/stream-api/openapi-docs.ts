import type { Example, OperationDocs } from '../http/openapi.js'
import { accepted, batchList, deletion, empty, partial, processed, stream, streamDocument, streamList } from './openapi-examples.js'

export { streamErrorExamples, streamTags } from './openapi-examples.js'

// The OpenAPI docs of the stream interface's operations (by operationId; see src/http/openapi.ts),
// with the upload bodies, which the upload routes read as streams rather than through a schema.

const ok = (value: unknown, summary?: string): Record<string, Example> => ({ ok: { ...(summary && { summary }), value } })

const NDJSON_ROWS =
  '{"id":"SKU1","gtin":"4006381333931","title":"Shirt","price":10.50,"on_sale":true}\n{"id":"SKU2","gtin":"4006381333948","title":"Socks","price":"4.99"}\n'
const Row = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', description: 'the unique row identifier' } },
  additionalProperties: { type: ['string', 'number', 'boolean', 'null'] },
  description: 'a flat object of scalar values',
}
const GZIP =
  ' The body may be gzip-compressed (`Content-Encoding: gzip`; deflate too); it is at most `MAX_UPLOAD_BYTES` (200 MB) once ' +
  'decoded. Swagger UI sends it uncompressed.'

const uploadBody = {
  required: true,
  description:
    'Product rows: flat JSON objects of scalar values, each with an `id`. Chunked streams take NDJSON (one object per line, ' +
    'each line at most 2,097,152 bytes); referenced streams NDJSON or a JSON array of objects (`application/json`). A stream ' +
    'keeps the content type of its first upload.' +
    GZIP,
  content: {
    'application/x-ndjson': {
      schema: { type: 'string', description: 'one JSON object per line' },
      examples: {
        rows: { summary: 'Two rows', value: NDJSON_ROWS },
        partial: {
          summary: 'A broken line and a row without id (202 with both reported)',
          value: '{"id":"SKU1","title":"Shirt"}\n{"id":"SKU2","title":"Socks\n{"title":"no id"}\n',
        },
      },
    },
    'application/json': {
      schema: { type: 'array', items: Row },
      examples: {
        rows: {
          summary: 'Referenced streams only',
          value: [
            { id: 'SKU1', gtin: '4006381333931', title: 'Shirt', price: 10.5, on_sale: true },
            { id: 'SKU2', gtin: '4006381333948', title: 'Socks', price: '4.99' },
          ],
        },
      },
    },
  },
}
const UPLOAD =
  'Adds or replaces rows by `id` (whole rows) and answers 202 with the batch. Values are stored as text: `true` becomes `1`, ' +
  '`false` and `null` empty, numbers keep their digits as written. A chunked upload with some bad lines is still accepted (202), ' +
  'the bad lines reported in `stages.upload.errors`, grouped by message with the first example of each; an empty body answers ' +
  '422 with a failed batch. Nothing reaches a site until an import runs (`POST /platform/v2/process/{siteId}`). A `disabled` ' +
  'stream answers 403, a `locked` or `locked_upload` one 423. The body is received whole before the upload waits for its turn; ' +
  'an upload over `STREAM_REQUEST_TIMEOUT_MS` (10 s) writes nothing (503). 30 requests per second per stream.'
const uploadResponses = {
  202: { accepted: { summary: 'Every row accepted', value: accepted }, partial: { summary: 'Partial upload', value: partial } },
  422: { empty: { summary: 'Empty payload', value: empty } },
}

export const streamOperations: Record<string, OperationDocs> = {
  createStream: {
    summary: 'Create a stream',
    description:
      '`name` (3 to 255 characters, unique in the account, also among streams deleted less than 7 days ago) and `type`: ' +
      '`chunked` (the default: NDJSON, rows checked on upload) or `referenced` (NDJSON or a JSON array, checked at import; for very ' +
      'large catalogs). The type cannot change later. A duplicate name is a 409 naming the stream; at most 100 streams (422).',
    request: {
      chunked: { value: { data: { type: 'stream', attributes: { name: 'main catalog' } } } },
      referenced: { summary: 'Referenced stream', value: { data: { type: 'stream', attributes: { name: 'full catalog export', type: 'referenced' } } } },
    },
    responses: {
      201: ok(streamDocument),
      409: {
        duplicate: {
          summary: 'Name taken',
          value: {
            errors: [
              {
                status: '409',
                title: 'Conflict',
                detail: 'A stream named "main catalog" already exists',
                meta: { duplicate: { type: 'stream', id: '1', links: { self: '/streams/1' } } },
              },
            ],
          },
        },
      },
    },
  },
  listStreams: {
    summary: 'List streams',
    description: 'The streams of the account, by id, at most 10 per page (`page[offset]`, `page[limit]`); the top-level `links` page on.',
    responses: { 200: ok(streamList) },
  },
  getStream: { summary: 'Read a stream', description: 'One stream of the account.', responses: { 200: ok(streamDocument) } },
  updateStream: {
    summary: 'Rename a stream',
    description:
      'Changes `name` (the same rules as on create). `data.id`, when given, must be the stream in the path; the type and the account cannot change (422).',
    request: { rename: { value: { data: { id: '1', type: 'stream', attributes: { name: 'main catalog DE' } } } } },
    responses: { 200: ok({ data: { ...stream, attributes: { ...stream.attributes, name: 'main catalog DE', updatedAt: '2026-11-22T08:15:00+00:00' } } }) },
  },
  deleteStream: {
    summary: 'Delete a stream',
    description:
      'Makes the stream and its data inaccessible at once (204); it is purged after 7 days, and its name stays reserved until ' +
      'then. Sites importing it report 1005 and leave it out. This cannot be undone.',
  },
  uploadProducts: {
    summary: 'Upload product rows',
    description: `${UPLOAD} POST, PUT and PATCH behave the same.`,
    returns: 'The batch: every row accepted, or a partial upload with the bad lines reported',
    requestBody: uploadBody,
    responses: uploadResponses,
  },
  deleteProducts: {
    summary: 'Delete product rows',
    description:
      'Deletes the rows whose ids the NDJSON body lists (one `{"id":…}` per line), or, with `?all=true` and no body, every row ' +
      'of the stream (which also starts a new set of attribute names). Answers 202 with the batch; the rows leave the sites at ' +
      'their next import.' +
      GZIP,
    requestBody: {
      required: false,
      description: 'NDJSON, one object with the `id` of a row to delete per line. Leave it out with `all=true`.',
      content: {
        'application/x-ndjson': {
          schema: { type: 'string', description: 'one JSON object per line' },
          examples: { ids: { summary: 'Two rows', value: '{"id":"SKU1"}\n{"id":"SKU2"}\n' } },
        },
      },
    },
    returns: 'The deletion batch',
    responses: { 202: ok(deletion), 422: { empty: { summary: 'Empty payload', value: empty } } },
  },
  deleteProduct: {
    summary: 'Delete one product row',
    description: 'Deletes the row with this id (URL-encoded) as a batch of its own; the row leaves the sites at their next import.',
    responses: { 202: ok(deletion) },
  },
  listBatches: {
    summary: 'List the batches of a stream',
    description: 'The batches of the stream, newest first, at most 10 per page (`page[offset]`, `page[limit]`). 100 requests per second per stream.',
    responses: { 200: ok(batchList) },
  },
  getBatch: {
    summary: 'Read a batch',
    description:
      'What became of one upload: `status` `uploaded`, `processed` (an import applied it; `stages.processing` filled) or `failed`, ' +
      'with the counts and grouped errors of each stage. Poll it after an import, or subscribe to `batch.processed`.',
    responses: { 200: { uploaded: { summary: 'Uploaded', value: partial }, processed: { summary: 'Imported', value: processed } } },
  },
}
