import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { siteDashboard } from '../channels/site-dashboard.js'
import type { ConsoleDeps } from './deps.js'
import { page } from './layout.js'
import { ProductBrowserQuery, SiteParams, SitePageQuery } from './page-params.js'
import { accountOfSession, queryInt, queryText, sendPage } from './pages.js'
import { sitePage, type ErrorFilter } from './site-page-views.js'
import { productBrowser } from './product-browser.js'
import { heldChannelOf } from './hold-banner-views.js'

const RUNS_PER_PAGE = 20
const CHART_POINTS = 50
const CHANNELS_SHOWN = 20

export const sitePageRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  const { db } = deps
  app.get('/console/sites/:siteId', { schema: { hide: true, params: SiteParams, querystring: SitePageQuery } }, async (request, reply) => {
    const accountId = accountOfSession(request)
    const { siteId } = request.params
    const { query } = request
    const runsOffset = queryInt(query.runs_offset, 0)
    const filter: ErrorFilter = { pid: queryText(query.pid, 64), type: queryText(query.type, 16), classification: queryText(query.classification, 16) }
    const dashboard = { runs: { limit: RUNS_PER_PAGE, offset: runsOffset }, chartPoints: CHART_POINTS, errorsOf: filter.pid, channelsShown: CHANNELS_SHOWN }
    const { site, runs, recentRuns: recent, imports, errors, sources, channels, shownChannels } = await siteDashboard(db, accountId, siteId, dashboard)
    const held = channels.flatMap(({ channel }) => heldChannelOf(site, channel) ?? [])
    const released = channels.find(({ channel }) => channel.id === queryText(query.released, 20))?.channel
    const shownErrors = errors.filter(
      (error) => (!filter.type || error.type === filter.type) && (!filter.classification || error.classification === filter.classification),
    )
    const body = sitePage({
      site,
      session: request.consoleSession!,
      runs,
      runsOffset,
      runsPerPage: RUNS_PER_PAGE,
      recentRuns: recent,
      imports,
      errors: shownErrors,
      errorFilter: filter,
      sources,
      channels: shownChannels,
      moreChannels: channels.length - shownChannels.length,
      held,
      released,
      // Only a run of this site is watched live: the pid must be one of its runs' UUIDs.
      livePid: recent.some((run) => run.pid === queryText(query.run, 64)) ? queryText(query.run, 64) : '',
      now: deps.clock(),
    })
    const trail: [string, string][] = [
      ['Overview', '/console'],
      [site.title, `/console/sites/${site.id}`],
    ]
    return sendPage(reply, page({ title: site.title, session: request.consoleSession, trail, body }))
  })

  app.get('/console/sites/:siteId/products', { schema: { hide: true, params: SiteParams, querystring: ProductBrowserQuery } }, async (request, reply) => {
    const accountId = accountOfSession(request)
    const { site, body, status } = await productBrowser(deps, accountId, request.params.siteId, request.query)
    const trail: [string, string][] = [
      ['Overview', '/console'],
      [site.title, `/console/sites/${site.id}`],
      ['Products', `/console/sites/${site.id}/products`],
    ]
    return sendPage(reply, page({ title: `Products of ${site.title}`, session: request.consoleSession, trail, body }), status)
  })
}
