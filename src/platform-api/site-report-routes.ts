import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ImportHistory, SiteError } from '../db/schema.js'
import { listImportHistory } from '../sites/import-history.js'
import { listSiteErrors } from '../sites/site-errors.js'
import { formatTimestamp, links } from './envelope.js'
import { baseOf, type PlatformDeps } from './deps.js'
import { Envelope, Links, SiteParams, Timestamp, errorResponses } from './schemas.js'
import { accountOf } from '../auth/caller.js'

const ErrorOut = Type.Object({
  id: Type.String(),
  pid: Type.String(),
  error: Type.String({ description: 'numeric code as text; the codes are listed in the README' }),
  data: Type.String({ description: 'JSON-encoded context values' }),
  site_id: Type.String(),
  message: Type.String(),
  datetime: Timestamp,
  type: Type.String({ enum: ['Error', 'Warning', 'Info'] }),
  classification: Type.String({ enum: ['low', 'medium', 'high'] }),
  links: Links,
})
const HistoryOut = Type.Object({
  id: Type.String(),
  site_id: Type.Integer(),
  import_time: Timestamp,
  import_time_utc: Timestamp,
  product_count: Type.String(),
  pid: Type.String(),
  links: Links,
})
const ErrorQuery = Type.Object({
  pid: Type.Optional(Type.String({ description: 'process id; default the latest run of the site' })),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  offset: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 }),
})
const HistoryQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  offset: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 }),
})

function errorView(error: SiteError, base: string) {
  return {
    id: error.id,
    pid: error.pid,
    error: String(error.error),
    data: JSON.stringify(error.data),
    site_id: error.site_id,
    message: error.message,
    datetime: formatTimestamp(error.created_at),
    type: error.type,
    classification: error.classification,
    links: links(base, { site: `/platform/v2/sites/${error.site_id}`, status: `/platform/v2/sites/${error.site_id}/status/${error.pid}` }),
  }
}

function historyView(entry: ImportHistory, base: string) {
  return {
    id: entry.id,
    site_id: Number(entry.site_id),
    import_time: formatTimestamp(entry.import_time),
    import_time_utc: formatTimestamp(entry.import_time),
    product_count: String(entry.product_count),
    pid: entry.pid,
    links: links(base, { site: `/platform/v2/sites/${entry.site_id}`, status: `/platform/v2/sites/${entry.site_id}/status/${entry.pid}` }),
  }
}

/** What the site's runs left behind: site errors per run, and the import history. */
export const siteReportRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, deps) => {
  const { db } = deps
  app.get(
    '/sites/:siteId/errors',
    {
      schema: {
        operationId: 'listSiteErrors',
        tags: ['errors'],
        params: SiteParams,
        querystring: ErrorQuery,
        response: { 200: Envelope('Errors', ErrorOut), ...errorResponses },
      },
    },
    async (request) => {
      const { errors } = await listSiteErrors(db, accountOf(request), request.params.siteId, request.query)
      return { success: true as const, Errors: errors.map((error) => errorView(error, baseOf(request, deps))) }
    },
  )
  app.get(
    '/sites/:siteId/importhistory',
    {
      schema: {
        operationId: 'listImportHistory',
        tags: ['import history'],
        params: SiteParams,
        querystring: HistoryQuery,
        response: { 200: Envelope('Importhistory', HistoryOut), ...errorResponses },
      },
    },
    async (request) => {
      const entries = await listImportHistory(db, accountOf(request), request.params.siteId, request.query)
      return { success: true as const, Importhistory: entries.map((entry) => historyView(entry, baseOf(request, deps))) }
    },
  )
}
