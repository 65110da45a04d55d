import { SOURCE_STATUSES } from '../sites/data-sources.js'
import { Type } from '@sinclair/typebox'
import type { DataSource } from '../db/schema.js'

// A site's source as the sources endpoints show it: where it fetches from and how it reads
// the file, never a credential (`credentials` says only whether some are stored), and its last fetch.

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()])
const RowError = Type.Object({
  message: Type.String(),
  occurrences: Type.Integer(),
  lines: Type.Array(Type.Integer(), { description: 'the first 20 line numbers (XML: item numbers) refused for this reason' }),
  example: Type.String(),
})
const FetchOut = Type.Object(
  {
    outcome: Type.String({ enum: ['imported', 'unchanged', 'failed'] }),
    pid: Type.String({ description: 'the run that fetched' }),
    started_at: Type.String({ description: 'ISO 8601' }),
    duration_ms: Type.Integer(),
    bytes: Type.Union([Type.Integer(), Type.Null()]),
    batch_id: Type.Union([Type.String(), Type.Null()]),
    products: Type.Union([Type.Integer(), Type.Null()]),
    refused_rows: Type.Union([Type.Integer(), Type.Null()]),
    errors: Type.Array(RowError),
    error: Type.Union([Type.String(), Type.Null()]),
  },
  { description: 'what the last import found at the source' },
)

export const SiteSourceOut = Type.Object({
  id: Type.Integer(),
  site_id: Type.Integer(),
  type: Type.String({ enum: ['stream', 'feed_url', 'sftp'] }),
  description: Type.String(),
  import_type: Type.Integer({ description: '1 = main data feed, 2 = additional data feed' }),
  status: Type.String({ enum: [...SOURCE_STATUSES] }),
  import_empty: Type.Boolean({ description: 'a fetched file without products empties the source instead of being refused' }),
  created_at: Type.String(),
  stream_id: Type.Optional(Type.Integer({ description: 'stream sources: the stream' })),
  url: Type.Optional(Type.String()),
  auth: Type.Optional(
    Type.Union([
      Type.Object({ type: Type.Literal('basic'), user: Type.String() }),
      Type.Object({ type: Type.Literal('header'), name: Type.String() }),
      Type.Null(),
    ]),
  ),
  host: Type.Optional(Type.String()),
  port: Type.Optional(Type.Integer()),
  user: Type.Optional(Type.String()),
  path: Type.Optional(Type.String()),
  host_key_sha256: Type.Optional(Type.String()),
  format: Type.Optional(Type.String({ enum: ['csv', 'tsv', 'xml', 'ndjson', 'json'] })),
  delimiter: Type.Optional(Type.String()),
  quote: Type.Optional(Type.String()),
  header: Type.Optional(Type.Boolean()),
  item_element: Type.Optional(Type.String()),
  id_column: Type.Optional(Type.String()),
  credentials: Type.Optional(Nullable(Type.String({ enum: ['stored'], description: 'credentials are write-only: never shown' }))),
  last_fetch: Type.Optional(Type.Union([FetchOut, Type.Null()])),
})

export function siteSourceView(source: DataSource) {
  const common = {
    id: Number(source.id),
    site_id: Number(source.site_id),
    type: source.kind,
    description: source.description,
    import_type: source.import_type,
    status: source.status,
    import_empty: source.import_empty,
    created_at: source.created_at.toISOString(),
  }
  const settings = source.settings
  if (source.kind === 'stream' || !settings) return { ...common, stream_id: Number(source.stream_id) }
  const { kind: _kind, ...shown } = settings
  const fetched = { ...shown, credentials: source.sealed_credentials ? ('stored' as const) : null, last_fetch: source.last_fetch }
  if ('url' in shown) {
    const { basic_user, header_name, ...rest } = fetched as typeof fetched & { basic_user?: string; header_name?: string }
    const auth =
      basic_user !== undefined
        ? { type: 'basic' as const, user: basic_user }
        : header_name !== undefined
          ? { type: 'header' as const, name: header_name }
          : null
    return { ...common, ...rest, auth }
  }
  return { ...common, ...fetched }
}
