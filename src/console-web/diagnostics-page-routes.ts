import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { channelDiagnostics, checksOfChannel, type DiagnosticsQuery } from '../channels/channel-diagnostics.js'
import { getChannel } from '../channels/channels.js'
import { failingValues } from '../channels/failing-values.js'
import { AppError } from '../errors.js'
import { getSite } from '../sites/sites.js'
import type { Db } from '../db/database.js'
import type { ConsoleDeps } from './deps.js'
import { diagnosticsHref, diagnosticsPage, type DiagnosticsFilter } from './diagnostics-page-views.js'
import { heldChannelOf } from './hold-banner-views.js'
import { page } from './layout.js'
import { ChannelParams, DiagnosticsPageQuery } from './page-params.js'
import { accountOfSession, queryInt, queryText, sendPage } from './pages.js'
import { fixMapsValues } from './rule-fix-links.js'

export const DIAGNOSTICS_PER_PAGE = 50

/** The form's filters from the query; an empty field is no filter. */
function filterOf(query: DiagnosticsPageQuery): DiagnosticsFilter {
  return {
    severity: queryText(query.severity, 200),
    code: queryText(query.code, 200),
    attribute: queryText(query.attribute, 200),
    id: queryText(query.id, 1000),
  }
}

function queryOf(filter: DiagnosticsFilter, offset: number): DiagnosticsQuery {
  const set = Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== ''))
  return { limit: DIAGNOSTICS_PER_PAGE, offset, ...set }
}

/** One page of the list, or the message of the filter it refused (a 400 of the domain). */
async function readList(
  db: Db,
  accountId: string,
  siteId: string,
  channelId: string,
  query: DiagnosticsQuery,
): Promise<{ found?: Awaited<ReturnType<typeof channelDiagnostics>>; problem?: string }> {
  try {
    return { found: await channelDiagnostics(db, accountId, siteId, channelId, query) }
  } catch (error) {
    // Only the filters' own refusals show on the page; anything else is the error page's.
    if (!(error instanceof AppError) || error.statusCode !== 400) throw error
    return { problem: error.message }
  }
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
      const site = await getSite(db, accountId, siteId)
      const { channel } = await getChannel(db, accountId, site.id, channelId)
      const { found, problem } = await readList(db, accountId, site.id, channel.id, queryOf(filter, offset))
      const checks = found?.checks ?? (await checksOfChannel(db, channel))
      // The values a "Fix with a rule" link maps: those of the failing codes whose fix is a map.
      const mapped = checks.codes.filter((code) => (checks.totals?.codes[code.code] ?? 0) > 0 && fixMapsValues(code))
      const failing = await failingValues(db, checks, mapped)
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
