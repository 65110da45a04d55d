import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { requestRun } from '../jobs/run-requests.js'
import { accountLimits } from '../accounts/object-limits.js'
import { siteRunStatus } from '../sites/site-overview.js'
import { updateSite } from '../sites/sites.js'
import { BadRequestError } from '../errors.js'
import type { ConsoleDeps } from './deps.js'
import { RunForm, RunParams, SiteParams, SiteStatusForm } from './page-params.js'
import { accountOfSession, requirePlatformCredential } from './pages.js'
import { runPhase } from './site-page-views.js'

/** What a person does on a site page: start a run and watch it, pause and resume the site's exports. */
export const runActionRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  const { db, config, runs, clock } = deps

  app.post('/console/sites/:siteId/runs', { schema: { hide: true, params: SiteParams, body: RunForm } }, async (request, reply) => {
    const accountId = accountOfSession(request)
    const { siteId } = request.params
    const { action } = request.body
    const queued = await requestRun(db, runs, accountId, siteId, { action: action ?? null })
    return reply.redirect(`/console/sites/${encodeURIComponent(siteId)}?run=${queued.pid}`, 303)
  })

  // Polled once a second by the site page while a run it started is under way; `status` as the
  // console shows it (success with warnings), `ended` once the run has.
  app.get('/console/sites/:siteId/runs/:pid/status', { schema: { hide: true, params: RunParams } }, async (request) => {
    const accountId = accountOfSession(request)
    const { siteId, pid } = request.params
    const { run, shownStatus } = await siteRunStatus(db, accountId, siteId, pid)
    const ended = run.status === 'success' || run.status === 'failed'
    return { pid: run.pid, status: shownStatus, ended, action: run.action, message: run.message, elapsed: runPhase(run, clock()) }
  })

  app.post('/console/sites/:siteId/status', { schema: { hide: true, params: SiteParams, body: SiteStatusForm } }, async (request, reply) => {
    const accountId = accountOfSession(request)
    const { siteId } = request.params
    // As through the API: changing a site takes the platform credential (PUT /sites accepts no bearer token).
    requirePlatformCredential(request, 'Pausing or resuming a site', 'PUT /sites')
    const { status } = request.body
    if (status !== 'active' && status !== 'paused_upload') throw new BadRequestError('status: must be active or paused_upload')
    const site = await updateSite(db, accountId, siteId, { status }, accountLimits(config))
    return reply.redirect(`/console/sites/${site.id}`, 303)
  })
}
