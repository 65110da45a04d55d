import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { Site } from '../db/schema.js'
import type { DbHandle } from '../db/database.js'
import { accountLimits } from '../accounts/object-limits.js'
import { copySite } from '../channels/copy-site.js'
import { isId } from '../db/ids.js'
import { projectIds } from '../sites/projects.js'
import { createSite, deleteSite, findSites, getSite, listSites, updateSite, type SiteDeletion } from '../sites/sites.js'
import { NotFoundError } from '../errors.js'
import { baseOf, type PlatformDeps } from './deps.js'
import {
  copySiteSchema,
  createProjectSiteSchema,
  createSiteSchema,
  deleteProjectSiteSchema,
  deleteSiteSchema,
  getProjectSiteSchema,
  getSiteSchema,
  listProjectSitesSchema,
  listSitesSchema,
  updateProjectSiteSchema,
  updateSiteSchema,
} from './site-schemas.js'
import { siteView } from './views.js'
import { accountOf } from '../auth/caller.js'
import { answerOnce } from '../http/idempotent-answer.js'

// availableProjectIds: a response about one site carries every project id of the account (at
// most MAX_PROJECTS_PER_ACCOUNT); a listing carries only each site's own project, since repeating
// every project on every site made a listing grow with sites x projects.
async function oneSite(deps: PlatformDeps, request: FastifyRequest, site: Site, db: DbHandle = deps.db) {
  const available = await projectIds(db, accountOf(request))
  return { success: true as const, Sites: [siteView(site, baseOf(request, deps), available)] }
}
function siteListing(deps: PlatformDeps, request: FastifyRequest, sites: Site[]) {
  return { success: true as const, Sites: sites.map((s) => siteView(s, baseOf(request, deps), [s.project_id])) }
}

// The site's feed files go once no row names them any more: after the commit (deleteSite).
function siteDeletion(deps: PlatformDeps, request: FastifyRequest, segment: string, pathProjectId?: string): SiteDeletion {
  const onHookError = (error: unknown) => {
    request.log.warn({ err: error }, 'the feed files of a deleted site could not be removed')
  }
  return { storage: deps.feedStorage, runs: deps.runs, accountId: accountOf(request), segment, pathProjectId, onHookError }
}

export const siteRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, deps) => {
  const { db } = deps
  const limits = accountLimits(deps.config)
  const one = (request: FastifyRequest, site: Site) => oneSite(deps, request, site)
  // A new site's answer, read in the transaction that creates it when a key stores it.
  const created = (request: FastifyRequest) => async (site: Site, handle: DbHandle) => ({ status: 201, body: await oneSite(deps, request, site, handle) })
  const many = (request: FastifyRequest, sites: Site[]) => siteListing(deps, request, sites)

  app.get('/sites', { schema: listSitesSchema }, async (request) => many(request, await listSites(db, accountOf(request))))

  app.post('/sites', { schema: createSiteSchema }, async (request, reply) =>
    answerOnce(request, reply, deps, { run: () => createSite(db, accountOf(request), request.body, limits), render: created(request) }),
  )

  // A numeric id names one site; `<tagName>:<tagValue>` every site carrying that tag (a listing).
  app.get('/sites/:siteId', { schema: getSiteSchema }, async (request) => {
    const { siteId } = request.params
    if (isId(siteId)) return one(request, await getSite(db, accountOf(request), siteId))
    const sites = await findSites(db, accountOf(request), siteId)
    if (sites.length === 0) throw new NotFoundError()
    return many(request, sites)
  })

  app.put('/sites/:siteId', { schema: updateSiteSchema }, async (request) =>
    one(request, await updateSite(db, accountOf(request), request.params.siteId, request.body, limits)),
  )

  app.delete('/sites/:siteId', { schema: deleteSiteSchema }, async (request) => {
    await deleteSite(db, siteDeletion(deps, request, request.params.siteId))
    return { success: true as const }
  })

  app.delete('/projects/:projectId/sites/:siteId', { schema: deleteProjectSiteSchema }, async (request) => {
    await deleteSite(db, siteDeletion(deps, request, request.params.siteId, request.params.projectId))
    return { success: true as const }
  })

  app.post('/sites/:siteId/copy', { schema: copySiteSchema }, async (request, reply) =>
    answerOnce(request, reply, deps, {
      run: () => copySite(db, { accountId: accountOf(request), segment: request.params.siteId, input: request.body, limits }),
      render: created(request),
    }),
  )

  app.get('/projects/:projectId/sites', { schema: listProjectSitesSchema }, async (request) =>
    many(request, await listSites(db, accountOf(request), request.params.projectId)),
  )

  app.post('/projects/:projectId/sites', { schema: createProjectSiteSchema }, async (request, reply) =>
    answerOnce(request, reply, deps, {
      run: () => createSite(db, accountOf(request), request.body, limits, request.params.projectId),
      render: created(request),
    }),
  )

  app.put('/projects/:projectId/sites/:siteId', { schema: updateProjectSiteSchema }, async (request) =>
    one(request, await updateSite(db, accountOf(request), request.params.siteId, request.body, limits, request.params.projectId)),
  )

  // Reading one site of a project is not in docs/interface.md, but its links make clients expect it.
  app.get('/projects/:projectId/sites/:siteId', { schema: getProjectSiteSchema }, async (request) => {
    const site = await getSite(db, accountOf(request), request.params.siteId)
    if (site.project_id !== request.params.projectId) throw new NotFoundError()
    return one(request, site)
  })
}
