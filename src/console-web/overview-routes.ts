import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { accountOverview } from '../channels/account-overview.js'
import type { ConsoleDeps } from './deps.js'
import { page } from './layout.js'
import { overviewPage } from './overview-views.js'
import { ReleasedQuery } from './page-params.js'
import { accountOfSession, queryText, sendPage } from './pages.js'

/** Channels the overview lists at most (an account may have thousands): held first, then below their threshold. */
const CHANNELS_SHOWN = 100

export const overviewRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, { db }) => {
  app.get('/console', { schema: { hide: true, querystring: ReleasedQuery } }, async (request, reply) => {
    const accountId = accountOfSession(request)
    const overview = await accountOverview(db, accountId, { channelsShown: CHANNELS_SHOWN })
    const body = overviewPage(overview, { session: request.consoleSession!, released: queryText(request.query.released, 20) })
    return sendPage(reply, page({ title: 'Overview', session: request.consoleSession, body }))
  })
}
