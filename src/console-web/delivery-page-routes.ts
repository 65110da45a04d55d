import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { channelDeliveries, testDestination, type DestinationTest } from '../channels/destination-checks.js'
import type { ConsoleDeps } from './deps.js'
import { deliveriesPath, deliveryPage } from './delivery-page-views.js'
import { page } from './layout.js'
import { ChannelParams, DestinationParams, OffsetQuery } from './page-params.js'
import { accountOfSession, queryInt, requirePlatformCredential, sendPage } from './pages.js'

const ATTEMPTS_PER_PAGE = 50
/** An offset past this many attempts is read as this: Postgres takes a bigint, the page no more. */
const MAX_OFFSET = 1_000_000_000

/**
 * A channel's destinations and delivery attempts in the console: GET shows them, and the
 * Test button of an SFTP or FTPS destination POSTs here to run the test that
 * POST /platform/v2/sites/{siteId}/channels/{channelId}/destinations/{id}/test runs, then shows the page
 * again with its outcome. Another account's channel is a 404 page, as everywhere in the console.
 */
export const deliveryPageRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  const { db } = deps

  /** The page of the channel `params` names, its attempts from `offset` on. */
  async function show(request: FastifyRequest, reply: FastifyReply, params: ChannelParams, offset: number, test?: DestinationTest) {
    const accountId = accountOfSession(request)
    // One more than shown says whether older attempts exist.
    const target = { accountId, siteSegment: params.siteId, channelId: params.channelId }
    const { site, details, attempts: fetched } = await channelDeliveries(db, target, { limit: ATTEMPTS_PER_PAGE + 1, offset })
    const body = deliveryPage({
      details,
      session: request.consoleSession!,
      attempts: fetched.slice(0, ATTEMPTS_PER_PAGE),
      offset,
      perPage: ATTEMPTS_PER_PAGE,
      more: fetched.length > ATTEMPTS_PER_PAGE,
      test,
    })
    const path = deliveriesPath(site.id, details.channel.id)
    const trail: [string, string][] = [
      ['Overview', '/console'],
      [site.title, `/console/sites/${site.id}`],
      [`Deliveries of ${details.channel.name}`, path],
    ]
    const title = `Destinations and deliveries of ${details.channel.name}`
    return sendPage(reply, page({ title, session: request.consoleSession, trail, body }))
  }

  app.get(
    '/console/sites/:siteId/channels/:channelId/deliveries',
    { schema: { hide: true, params: ChannelParams, querystring: OffsetQuery } },
    async (request, reply) => show(request, reply, request.params, queryInt(request.query.offset, 0, MAX_OFFSET)),
  )

  app.post(
    '/console/sites/:siteId/channels/:channelId/destinations/:destinationId/test',
    { schema: { hide: true, params: DestinationParams } },
    async (request, reply) => {
      const accountId = accountOfSession(request)
      // As through the API, whose channel routes take the X-Auth-Token only.
      requirePlatformCredential(request, 'Testing a destination', 'POST /platform/v2/sites/{siteId}/channels/{channelId}/destinations/{id}/test')
      const { siteId, channelId, destinationId } = request.params
      const options = { guard: deps.outbound, credentials: deps.credentials, timeoutMs: deps.config.PUSH_TIMEOUT_SECONDS * 1000 }
      const test = await testDestination(db, { accountId, siteSegment: siteId, channelId, destinationId }, options)
      request.log.info({ accountId, channelId, destinationId: test.destinationId, ok: test.ok }, 'a destination was tested in the console')
      // After a Test the page shows the newest attempts.
      return show(request, reply, { siteId, channelId }, 0, test)
    },
  )
}
