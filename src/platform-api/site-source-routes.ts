import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { accountLimits } from '../accounts/object-limits.js'
import { accountOf } from '../auth/caller.js'
import { IdempotencyHeaders, answerOnce } from '../http/idempotent-answer.js'
import { createSiteSource, deleteSiteSource, getSiteSource, listSiteSources, updateSiteSource } from '../sites/site-sources.js'
import type { PlatformDeps } from './deps.js'
import { SOURCE_STATUSES } from '../sites/data-sources.js'
import { Envelope, NullableBoolean, NullableOneOf, NullableString, SiteParams, errorResponses, writeErrorResponses } from './schemas.js'
import { SiteSourceOut, siteSourceView } from './site-source-views.js'

// A site's sources of every kind: stream sources (also at …/streams), feed URLs and SFTP files.
const Params = Type.Object({ siteId: Type.String(), sourceId: Type.String({ description: 'id of the source' }) })
const field = (description: string) => Type.Optional(Type.Unknown({ description }))
// Every field a fetched source alone takes is read by readFetchedSource (source-input.ts), which names the field of a mistake.
const SourceBody = Type.Object({
  // Not an enum: readKind (site-sources.ts) words its refusal ("type: one of stream, feed_url, sftp") and requires it on create.
  type: field('stream, feed_url or sftp (required to create; cannot change)'),
  description: Type.Optional(NullableString()),
  // Not an integer enum: readImportType (data-sources.ts) reads "" as not given and says what 1 and 2 mean.
  import_type: Type.Optional(
    Type.Union([Type.Integer(), Type.String(), Type.Null()], { description: '1 = main data feed (default), 2 = additional data feed' }),
  ),
  status: Type.Optional(NullableOneOf(SOURCE_STATUSES, { description: 'active (default) or paused' })),
  import_empty: Type.Optional(NullableBoolean()),
  stream_id: Type.Optional(Type.Union([Type.Integer(), Type.String(), Type.Null()], { description: 'stream sources: a stream of the account' })),
  url: field('feed_url: the http(s) URL of the file'),
  auth: field('feed_url: {"type":"basic","user","password"} or {"type":"header","name","value"}; write-only secrets'),
  host: field('sftp: host name or address'),
  // Not an integer: port() (src/input/server-fields.ts) takes digits only and "" as the default; coercion would take true or " 22".
  port: field('sftp: default 22'),
  user: field('sftp: the login'),
  password: field('sftp: write-only'),
  private_key: field('sftp: an OpenSSH or PEM private key, write-only'),
  passphrase: field("sftp: the private key's passphrase, write-only"),
  host_key_sha256: field("sftp: the server's host key fingerprint, SHA256:… as ssh-keygen -l prints it (required)"),
  path: field('sftp: the path of the file'),
  // Not an enum: only a fetched source reads it (readFormat), "" lets the file name tell, and a stream source ignores it.
  format: field('csv, tsv, xml, ndjson or json; default: told by the file name'),
  delimiter: field('csv, tsv: one character; default "," or a tab'),
  quote: field('csv, tsv: one character, "" for none; default "'),
  // Not NullableBoolean, whose coercion takes "true" and 1: readFormat takes true or false only, and for csv and tsv only.
  header: field('csv, tsv: whether the first record names the columns; default true'),
  item_element: field('xml: the element of one product; default RSS item or Atom entry'),
  id_column: field("the attribute that is the product's id; default id"),
})
const PageQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  cursor: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0, description: 'the sources after this id' }),
})
const Sources = Envelope('Sources', SiteSourceOut)
const SourcePage = Type.Composite([
  Sources,
  Type.Object({ meta: Type.Object({ next: Type.Integer({ description: 'the cursor of the next page; 0: none' }) }) }),
])
const tags = ['data sources']

export const siteSourceRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, deps) => {
  const { db } = deps
  const connectors = { guard: deps.outbound, credentials: deps.credentials, limits: accountLimits(deps.config) }
  const single = (source: Parameters<typeof siteSourceView>[0]) => ({ success: true as const, Sources: [siteSourceView(source)] })

  app.get(
    '/sites/:siteId/sources',
    { schema: { operationId: 'listSiteSources', tags, params: SiteParams, querystring: PageQuery, response: { 200: SourcePage, ...errorResponses } } },
    async (request) => {
      const page = await listSiteSources(db, accountOf(request), request.params.siteId, request.query)
      return { success: true as const, Sources: page.sources.map(siteSourceView), meta: { next: page.next } }
    },
  )

  app.post(
    '/sites/:siteId/sources',
    {
      schema: {
        operationId: 'createSiteSource',
        tags,
        headers: IdempotencyHeaders,
        params: SiteParams,
        body: SourceBody,
        response: { 201: Sources, ...writeErrorResponses },
      },
    },
    async (request, reply) =>
      answerOnce(request, reply, deps, {
        run: () => createSiteSource(db, accountOf(request), request.params.siteId, request.body, connectors),
        render: (source) => ({ status: 201, body: single(source) }),
      }),
  )

  app.get(
    '/sites/:siteId/sources/:sourceId',
    { schema: { operationId: 'getSiteSource', tags, params: Params, response: { 200: Sources, ...errorResponses } } },
    async (request) => single(await getSiteSource(db, accountOf(request), request.params.siteId, request.params.sourceId)),
  )

  app.put(
    '/sites/:siteId/sources/:sourceId',
    { schema: { operationId: 'updateSiteSource', tags, params: Params, body: SourceBody, response: { 200: Sources, ...writeErrorResponses } } },
    async (request) => single(await updateSiteSource(db, accountOf(request), request.params.siteId, request.params.sourceId, request.body, connectors)),
  )

  app.delete(
    '/sites/:siteId/sources/:sourceId',
    {
      schema: {
        operationId: 'deleteSiteSource',
        tags,
        params: Params,
        response: { 200: Type.Object({ success: Type.Literal(true), message: Type.String() }), ...errorResponses },
      },
    },
    async (request) => {
      const source = await deleteSiteSource(db, accountOf(request), request.params.siteId, request.params.sourceId)
      return { success: true as const, message: `Source ${source.id} deleted` }
    },
  )
}
