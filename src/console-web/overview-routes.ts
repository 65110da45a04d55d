import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { channelStatesOfAccount } from '../channels/channel-states.js'
import { siteSummaries } from '../sites/site-overview.js'
import { streamSummaries } from '../streams/stream-overview.js'
import type { ConsoleDeps } from './deps.js'
import { html } from './html.js'
import { heldChannelOf, holdBanners, releasedNotice } from './hold-banner-views.js'
import { page } from './layout.js'
import { channelsTable, sitesTable, streamsTable } from './overview-views.js'
import { ReleasedQuery } from './page-params.js'
import { accountOfSession, queryText, sendPage } from './pages.js'

/** Channels the overview lists at most (an account may have thousands): held first, then below their threshold. */
const CHANNELS_SHOWN = 100

export const overviewRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, { db }) => {
  app.get('/console', { schema: { hide: true, querystring: ReleasedQuery } }, async (request, reply) => {
    const accountId = accountOfSession(request)
    const [sites, channels, streams] = await Promise.all([
      siteSummaries(db, accountId),
      channelStatesOfAccount(db, accountId, CHANNELS_SHOWN),
      streamSummaries(db, accountId),
    ])
    const held = channels.rows.flatMap((c) => heldChannelOf({ id: c.siteId, title: c.siteTitle }, { id: c.channelId, name: c.name, hold: c.hold }) ?? [])
    const released = channels.rows.find((c) => c.channelId === queryText(request.query.released, 20))
    const session = request.consoleSession!
    const body = html`${releasedNotice(released && { id: released.channelId, name: released.name })} ${holdBanners(held, channels.held, session, '/console')}
      <section aria-labelledby="sites-heading">
        <h2 id="sites-heading">Sites</h2>
        ${sitesTable(sites)}
      </section>
      <section aria-labelledby="channels-heading">
        <h2 id="channels-heading">Channels</h2>
        ${channelsTable(channels)}
      </section>
      <section aria-labelledby="streams-heading">
        <h2 id="streams-heading">Streams</h2>
        ${streamsTable(streams)}
      </section>`
    return sendPage(reply, page({ title: 'Overview', session, body }))
  })
}
