import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { DiagnosticsQuery } from '../channels/channel-diagnostics.js'
import { diagnosticsOverview } from '../channels/diagnostics-overview.js'
import type { ConsoleDeps } from './deps.js'
import { diagnosticsHref, diagnosticsPage, type DiagnosticsFilter } from './diagnostics-page-views.js'
import { heldChannelOf } from './hold-banner-views.js'
import { page } from './layout.js'
import { ChannelParams, DiagnosticsPageQuery } from './page-params.js'
import { accountOfSession, queryInt, queryText, sendPage } from './pages.js'
import { fixMapsValues } from './rule-fix-links.js'

export const DIAGNOSTICS_PER_PAGE = 50

/**
 * The form's filters from the query, as typed (the URL's 16 KB bounds them; the filters' own limits
 * are refused with their messages): an id cut to 1,000 characters could name another product. An
 * empty field is no filter.
 */
function filterOf(query: DiagnosticsPageQuery): DiagnosticsFilter {
  return {
    severity: queryText(query.severity, Infinity),
    code: queryText(query.code, Infinity),
    attribute: queryText(query.attribute, Infinity),
    id: queryText(query.id, Infinity),
  }
}

function queryOf(filter: DiagnosticsFilter, offset: number): DiagnosticsQuery {
  const set = Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== ''))
  return { limit: DIAGNOSTICS_PER_PAGE, offset, ...set }
}

/**
 * A channel's diagnostics page: the counts of its last export's checks and one page of its failed
 * checks, filtered. A filter the template does not know shows its message above the list and
 * answers 400; another account's site or channel is a 404 like everywhere in the console.
 */
export const diagnosticsPageRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, { db }) => {
  app.get(
    '/console/sites/:siteId/channels/:channelId/diagnostics',
    { schema: { hide: true, params: ChannelParams, querystring: DiagnosticsPageQuery } },
    async (request, reply) => {
      const accountId = accountOfSession(request)
      const { siteId, channelId } = request.params
      const { query } = request
      const filter = filterOf(query)
      const offset = queryInt(query.offset, 0)
      // The values a "Fix with a rule" link maps: those of the failing codes whose fix is a map.
      const target = { accountId, siteSegment: siteId, channelId }
      const { site, channel, checks, found, problem, failing } = await diagnosticsOverview(db, target, queryOf(filter, offset), fixMapsValues)
      const body = diagnosticsPage({
        checks,
        filter,
        entries: found?.entries ?? [],
        total: found?.total ?? 0,
        offset,
        perPage: DIAGNOSTICS_PER_PAGE,
        problem,
        session: request.consoleSession!,
        held: heldChannelOf(site, channel),
        released: queryText(query.released, 20) === channel.id ? channel : undefined,
        failing,
      })
      const trail: [string, string][] = [
        ['Overview', '/console'],
        [site.title, `/console/sites/${site.id}`],
        [`Diagnostics of ${channel.name}`, diagnosticsHref(checks)],
      ]
      const title = `Diagnostics of ${channel.name}`
      return sendPage(reply, page({ title, session: request.consoleSession, trail, body }), problem === undefined ? 200 : 400)
    },
  )
}
