import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { releaseHeldExport, type ReleaseContext } from '../exports/release-export.js'
import { ConflictError } from '../errors.js'
import type { ConsoleDeps } from './deps.js'
import { html } from './html.js'
import { page } from './layout.js'
import { ChannelParams } from './page-params.js'
import { accountOfSession, requirePlatformCredential, sendPage } from './pages.js'

/**
 * Where a release comes back to: the page its form named when that is the overview or a page of the
 * channel's site (a plain path of ours, nothing else: no other host, no dot segments, no query), else
 * the site page.
 */
export function returnPath(value: unknown, siteId: string): string {
  const site = `/console/sites/${siteId}`
  if (value === '/console' || value === site) return value
  if (typeof value === 'string' && value.startsWith(`${site}/`) && /^[A-Za-z0-9/_-]+$/.test(value) && !value.includes('//')) return value
  return site
}

/**
 * The Release button of a held channel's banner: publishes the held export as
 * POST /platform/v2/sites/{site}/channels/{id}/release does, for the session's account, and comes
 * back to the page with a notice. A hold that changed or ended since the page was shown is a 409
 * page with the reason; another account's channel a 404 page, as everywhere in the console.
 */
export const channelReleaseRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  app.post('/console/sites/:siteId/channels/:channelId/release', { schema: { hide: true, params: ChannelParams } }, async (request, reply) => {
    const accountId = accountOfSession(request)
    // As through the API, whose channel routes take the X-Auth-Token only.
    requirePlatformCredential(request, 'Releasing a held export', 'POST /platform/v2/sites/{siteId}/channels/{channelId}/release')
    const { siteId, channelId } = request.params
    const form = (request.body ?? {}) as { pid?: unknown; return?: unknown }
    const pid = typeof form.pid === 'string' && form.pid !== '' ? form.pid : undefined
    const context: ReleaseContext = {
      storage: deps.feedStorage,
      limits: { feedMaxBytes: deps.config.FEED_MAX_BYTES },
      now: deps.clock,
      onHookError: (error: unknown) => request.log.warn({ err: error }, 'the feed files a release replaced could not be removed'),
    }
    try {
      const released = await releaseHeldExport(deps.db, context, { accountId, siteSegment: siteId, channelId, pid })
      request.log.info({ accountId, channelId: released.channel.id, pid }, 'a held export was released in the console')
      return reply.redirect(`${returnPath(form.return, released.channel.site_id)}?released=${released.channel.id}`, 303)
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error
      const back = returnPath(form.return, encodeURIComponent(siteId))
      const body = html`<p class="error" role="alert">${error.message}</p>
        <p><a href="${back}">Back</a></p>`
      return sendPage(reply, page({ title: 'Not released', session: request.consoleSession, body }), 409)
    }
  })
}
