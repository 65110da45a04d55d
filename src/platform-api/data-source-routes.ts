import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { DataSource } from '../db/schema.js'
import { accountLimits } from '../accounts/object-limits.js'
import { SOURCE_STATUSES, createDataSource, deleteDataSource, getDataSource, listDataSources, updateDataSource } from '../sites/data-sources.js'
import { type PlatformDeps } from './deps.js'
import { NullableBoolean, NullableOneOf, NullableString, SiteParams, errorResponses, writeErrorResponses } from './schemas.js'
import { accountOf } from '../auth/caller.js'
import { IdempotencyHeaders, answerOnce } from '../http/idempotent-answer.js'

// Site stream data sources (docs/interface.md "site stream data sources"): X-Auth-Token or bearer. Ids are
// integers here, as docs/interface.md types them.
const SourceOut = Type.Object({
  id: Type.Integer(),
  site_id: Type.Integer(),
  description: Type.String(),
  source: Type.String(),
  import_type: Type.Integer(),
  import_id: Type.Integer(),
  status: Type.String(),
  settings: Type.Array(Type.String()),
  stream_id: Type.Integer(),
  import_empty: Type.Boolean(),
})
const Meta = Type.Object({
  cursor: Type.Object({ current: Type.Integer(), prev: Type.Integer(), next: Type.Integer(), count: Type.Integer() }),
})
const Sources = Type.Object({ success: Type.Literal(true), Sources: Type.Array(SourceOut), meta: Meta })
const SourceBody = Type.Object({
  // Not an integer enum: readImportType (data-sources.ts) reads "" as not given and says what 1 and 2 mean; coercion would take true as 1.
  import_type: Type.Optional(NullableString({ description: '1 = main data feed, 2 = additional data feed' })),
  description: Type.Optional(NullableString()),
  // A string: ids are bigints, past a JSON number's precision; createDataSource wants a positive integer.
  stream_id: Type.Optional(NullableString({ description: 'id of a stream of the account' })),
  status: Type.Optional(NullableOneOf(SOURCE_STATUSES)),
  import_empty: Type.Optional(NullableBoolean()),
})
const SourceParams = Type.Object({ siteId: Type.String(), streamId: Type.String({ description: 'id of the data source' }) })
const PageQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  cursor: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 }),
  previous: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 }),
})
const tags = ['data sources']
const config = { auth: 'x-auth-token-or-bearer' as const }

function sourceView(source: DataSource) {
  return {
    id: Number(source.id),
    site_id: Number(source.site_id),
    description: source.description,
    source: 'stream',
    import_type: source.import_type,
    import_id: Number(source.id),
    status: source.status,
    settings: [`stream : ${source.stream_id}`],
    stream_id: Number(source.stream_id),
    import_empty: source.import_empty,
  }
}

const single = (source: DataSource) => ({
  success: true as const,
  Sources: [sourceView(source)],
  meta: { cursor: { current: 0, prev: 0, next: 0, count: 1 } },
})

export const dataSourceRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, deps) => {
  const { db, config: settings } = deps
  const limits = accountLimits(settings)
  app.get(
    '/sites/:siteId/streams',
    { config, schema: { operationId: 'listDataSources', tags, params: SiteParams, querystring: PageQuery, response: { 200: Sources, ...errorResponses } } },
    async (request) => {
      const page = await listDataSources(db, accountOf(request), request.params.siteId, request.query)
      return { success: true as const, Sources: page.sources.map(sourceView), meta: { cursor: page.cursor } }
    },
  )

  app.post(
    '/sites/:siteId/streams',
    {
      config,
      schema: {
        operationId: 'createDataSource',
        tags,
        headers: IdempotencyHeaders,
        params: SiteParams,
        body: SourceBody,
        response: { 201: Sources, ...writeErrorResponses },
      },
    },
    async (request, reply) =>
      answerOnce(request, reply, deps, {
        run: () => createDataSource(db, accountOf(request), request.params.siteId, request.body, limits),
        render: (source) => ({ status: 201, body: single(source) }),
      }),
  )

  app.get(
    '/sites/:siteId/streams/:streamId',
    { config, schema: { operationId: 'getDataSource', tags, params: SourceParams, response: { 200: Sources, ...errorResponses } } },
    async (request) => single(await getDataSource(db, accountOf(request), request.params.siteId, request.params.streamId)),
  )

  app.put(
    '/sites/:siteId/streams/:streamId',
    { config, schema: { operationId: 'updateDataSource', tags, params: SourceParams, body: SourceBody, response: { 200: Sources, ...writeErrorResponses } } },
    async (request) => single(await updateDataSource(db, accountOf(request), request.params.siteId, request.params.streamId, request.body)),
  )

  // 200 with a body, like every platform DELETE (docs/compatibility.md).
  app.delete(
    '/sites/:siteId/streams/:streamId',
    {
      config,
      schema: {
        operationId: 'deleteDataSource',
        tags,
        params: SourceParams,
        response: { 200: Type.Object({ success: Type.Literal(true), message: Type.String() }), ...errorResponses },
      },
    },
    async (request) => {
      const source = await deleteDataSource(db, accountOf(request), request.params.siteId, request.params.streamId)
      return { success: true as const, message: `Data source ${source.id} deleted` }
    },
  )
}
