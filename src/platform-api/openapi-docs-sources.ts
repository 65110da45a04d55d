import type { OperationDocs } from '../http/openapi.js'

// The OpenAPI docs of a site's sources of every kind (by operationId): streams, feed URLs, SFTP files.

const FEED_URL_SOURCE = {
  id: 2,
  site_id: 1,
  type: 'feed_url',
  description: 'shop export',
  import_type: 1,
  status: 'active',
  import_empty: false,
  created_at: '2026-11-27T10:00:00.000Z',
  url: 'https://shop.example.com/export/products.csv',
  format: 'csv',
  delimiter: ';',
  quote: '"',
  header: true,
  id_column: 'sku',
  auth: { type: 'basic', user: 'feeds' },
  credentials: 'stored',
  last_fetch: {
    outcome: 'imported',
    pid: '9f1c2a4e-0000-4000-8000-000000000001',
    started_at: '2026-11-27T10:05:00.000Z',
    duration_ms: 812,
    bytes: 48213,
    batch_id: 'c5b1e0a2-0000-4000-8000-000000000002',
    products: 120,
    refused_rows: 1,
    errors: [{ message: 'the id column "sku" is missing or empty', occurrences: 1, lines: [57], example: '{"sku":"","title":"…"}' }],
    error: null,
  },
}

const FETCH_RULES =
  'Each import fetches each active fetched source to local disk, within `SOURCE_MAX_BYTES`, `SOURCE_FETCH_TIMEOUT_SECONDS` and ' +
  "`SOURCE_IDLE_SECONDS`, then reads it as a stream into one batch that replaces the source's rows. An unchanged file (a 304 to the " +
  'validators sent back, the same size and time on SFTP, or the same bytes) is not parsed again. A source that fails keeps its data; ' +
  '`last_fetch` and site error 1007 say why. Refused records are grouped by message with their line numbers (1008).'

export const sourceDocs: Record<string, OperationDocs> = {
  listSiteSources: {
    summary: "List a site's sources of every kind",
    description:
      'Stream sources, feed URLs and SFTP files, in the order they stack (by id), each fetched one with its `last_fetch`. Credentials are never shown.',
    responses: { 200: { sources: { summary: 'A feed URL source', value: { success: true, Sources: [FEED_URL_SOURCE], meta: { next: 0 } } } } },
  },
  createSiteSource: {
    summary: 'Create a source: a stream, a feed URL or an SFTP file',
    description:
      '`type` `stream` takes the fields of `POST …/streams`. `feed_url` takes `url` and optional `auth` (basic, or one header); ' +
      '`sftp` takes `host`, `port`, `user`, `password` or `private_key` (and `passphrase`), `host_key_sha256` (required) and `path`. ' +
      "Both take `format` (default: the file name's extension), `delimiter`, `quote`, `header` (csv, tsv), `item_element` (xml) and " +
      `\`id_column\` (default \`id\`). The URL or host passes the outbound guard when saved and at each fetch. ${FETCH_RULES}`,
    request: {
      feed: {
        summary: 'A CSV at a URL with basic auth',
        value: {
          type: 'feed_url',
          url: 'https://shop.example.com/export/products.csv',
          delimiter: ';',
          id_column: 'sku',
          auth: { type: 'basic', user: 'feeds', password: '…' },
        },
      },
      sftp: {
        summary: 'A Google RSS feed on SFTP',
        value: { type: 'sftp', host: 'files.shop.example', user: 'export', password: '…', host_key_sha256: 'SHA256:…', path: 'out/google.xml' },
      },
    },
    responses: { 201: { created: { summary: 'Created', value: { success: true, Sources: [{ ...FEED_URL_SOURCE, last_fetch: null }] } } } },
  },
  getSiteSource: {
    summary: 'Read a source, with its last fetch',
    description: `A source of the site, of any kind. ${FETCH_RULES}`,
  },
  updateSiteSource: {
    summary: "Replace a fetched source's settings",
    description:
      'A PUT of the whole source (a stream source: its fields change as on `PUT …/streams/{id}`). The `type` cannot change. Credentials ' +
      'left out are kept for the same origin and user (SFTP: host, port, user and host key); otherwise they are asked for again. Any ' +
      'change of where or how the file is read makes the next import read it whatever its validators say.',
  },
  deleteSiteSource: {
    summary: 'Delete a source',
    description: "A fetched source's rows go with it; a stream source's stream stays. The next import builds the site without it.",
  },
}
