import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { checksOfChannel } from '../channels/channel-diagnostics.js'
import { exportHistoryOf, listChannels } from '../channels/channels.js'
import { listSiteSources } from '../sites/site-sources.js'
import { listImportHistory } from '../sites/import-history.js'
import { listSiteRuns } from '../sites/site-overview.js'
import { listSiteErrors } from '../sites/site-errors.js'
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
    const { site, runs } = await listSiteRuns(db, accountId, siteId, { limit: RUNS_PER_PAGE, offset: runsOffset })
    const [recent, imports, errors, sources, channels] = await Promise.all([
      listSiteRuns(db, accountId, site.id, { limit: CHART_POINTS, offset: 0 }).then((r) => r.runs),
      listImportHistory(db, accountId, site.id, { limit: CHART_POINTS, offset: 0 }),
      listSiteErrors(db, accountId, site.id, { pid: filter.pid || undefined, limit: 1000, offset: 0 }),
      listSiteSources(db, accountId, site.id, { limit: 100, cursor: 0 }).then((page) => page.sources),
      listChannels(db, accountId, site.id),
    ])
    // A site may have thousands of channels: the page shows the first ones, one query each.
    const shown = channels.slice(0, CHANNELS_SHOWN)
    // Each channel as listed: its history and checks read by its id, the site and channel not resolved again.
    const histories = await Promise.all(
      shown.map(async (details) => ({
        details,
        history: await exportHistoryOf(db, accountId, details.channel.id),
        checks: await checksOfChannel(db, details.channel),
      })),
    )
    const held = channels.flatMap(({ channel }) => heldChannelOf(site, channel) ?? [])
    const released = channels.find(({ channel }) => channel.id === queryText(query.released, 20))?.channel
    const shownErrors = errors.errors.filter(
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
      channels: histories,
      moreChannels: channels.length - shown.length,
      held,
      released,
      // Only a run of this site is watched live: the pid must be one of its runs' UUIDs.
      livePid: recent.some((run) => run.pid === queryText(query.run, 64)) ? queryText(query.run, 64) : '',
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
