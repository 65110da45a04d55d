import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { Site } from '../db/schema.js'
import { accountLimits } from '../accounts/object-limits.js'
import { copySite } from '../channels/copy-site.js'
import { isId } from '../db/ids.js'
import { projectIds } from '../sites/projects.js'
import { createSite, deleteSite, findSites, getSite, listSites, updateSite } from '../sites/sites.js'
import { NotFoundError } from '../errors.js'
import { baseOf, type PlatformDeps } from './deps.js'
import {
  Envelope,
  NullableBoolean,
  NullableString,
  ProjectParams,
  ProjectSiteParams,
  SiteParams,
  SuccessBody,
  conflictResponse,
  errorResponses,
  writeErrorResponses,
} from './schemas.js'
import { SiteOut, siteView } from './views.js'
import { accountOf } from '../auth/caller.js'

const SiteBody = Type.Object({
  id: Type.Optional(NullableString()),
  title: Type.Optional(NullableString()),
  reference: Type.Optional(NullableString()),
  project_id: Type.Optional(NullableString({ description: 'integer; a string of digits is accepted' })),
  id_column: Type.Optional(NullableString()),
  status: Type.Optional(NullableString({ enum: ['active', 'paused_upload', 'disabled', null] })),
  import_schedule: Type.Optional(NullableString()),
  created_at: Type.Optional(NullableString()),
})
const CopyBody = Type.Object({
  site_name: Type.Optional(NullableString()),
  project_id: Type.Optional(NullableString()),
  copy_export: Type.Optional(NullableBoolean()),
  copy_schedule_and_trigger: Type.Optional(NullableBoolean()),
  copy_shared_setting: Type.Optional(NullableBoolean()),
})
const Sites = Envelope('Sites', SiteOut)
const tags = ['sites']

export const siteRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, deps) => {
  const { db } = deps
  const limits = accountLimits(deps.config)
  // availableProjectIds: a response about one site carries every project id of the account (at
  // most MAX_PROJECTS_PER_ACCOUNT); a listing carries only each site's own project, since repeating
  // every project on every site made a listing grow with sites x projects (issue 10, finding 6).
  const envelope = async (request: FastifyRequest, site: Site) => {
    const available = await projectIds(db, accountOf(request))
    return { success: true as const, Sites: [siteView(site, baseOf(request, deps), available)] }
  }
  const listing = (request: FastifyRequest, sites: Site[]) => ({
    success: true as const,
    Sites: sites.map((s) => siteView(s, baseOf(request, deps), [s.project_id])),
  })

  app.get('/sites', { schema: { operationId: 'listSites', tags, response: { 200: Sites, ...errorResponses } } }, async (request) =>
    listing(request, await listSites(db, accountOf(request))),
  )

  app.post(
    '/sites',
    { schema: { operationId: 'createSite', tags, body: SiteBody, response: { 201: Sites, ...writeErrorResponses, ...conflictResponse } } },
    async (request, reply) => {
      const site = await createSite(db, accountOf(request), request.body, limits)
      return reply.code(201).send(await envelope(request, site))
    },
  )

  // A numeric id names one site; `<tagName>:<tagValue>` every site carrying that tag (a listing).
  app.get('/sites/:siteId', { schema: { operationId: 'getSite', tags, params: SiteParams, response: { 200: Sites, ...errorResponses } } }, async (request) => {
    const { siteId } = request.params
    if (isId(siteId)) return envelope(request, await getSite(db, accountOf(request), siteId))
    const sites = await findSites(db, accountOf(request), siteId)
    if (sites.length === 0) throw new NotFoundError()
    return listing(request, sites)
  })

  app.put(
    '/sites/:siteId',
    { schema: { operationId: 'updateSite', tags, params: SiteParams, body: SiteBody, response: { 200: Sites, ...writeErrorResponses, ...conflictResponse } } },
    async (request) => envelope(request, await updateSite(db, accountOf(request), request.params.siteId, request.body, limits)),
  )

  // The site's feed files go once no row names them any more: after the commit (deleteSite).
  const removalFailed = (request: FastifyRequest) => (error: unknown) => {
    request.log.warn({ err: error }, 'the feed files of a deleted site could not be removed')
  }
  app.delete(
    '/sites/:siteId',
    { schema: { operationId: 'deleteSite', tags, params: SiteParams, response: { 200: SuccessBody, ...errorResponses } } },
    async (request) => {
      await deleteSite(db, {
        storage: deps.feedStorage,
        accountId: accountOf(request),
        segment: request.params.siteId,
        onHookError: removalFailed(request),
      })
      return { success: true as const }
    },
  )

  app.delete(
    '/projects/:projectId/sites/:siteId',
    { schema: { operationId: 'deleteProjectSite', tags, params: ProjectSiteParams, response: { 200: SuccessBody, ...errorResponses } } },
    async (request) => {
      await deleteSite(db, {
        storage: deps.feedStorage,
        accountId: accountOf(request),
        segment: request.params.siteId,
        pathProjectId: request.params.projectId,
        onHookError: removalFailed(request),
      })
      return { success: true as const }
    },
  )

  app.post(
    '/sites/:siteId/copy',
    { schema: { operationId: 'copySite', tags, params: SiteParams, body: CopyBody, response: { 201: Sites, ...writeErrorResponses } } },
    async (request, reply) => {
      const site = await copySite(db, { accountId: accountOf(request), segment: request.params.siteId, input: request.body, limits })
      return reply.code(201).send(await envelope(request, site))
    },
  )

  app.get(
    '/projects/:projectId/sites',
    { schema: { operationId: 'listProjectSites', tags, params: ProjectParams, response: { 200: Sites, ...errorResponses } } },
    async (request) => listing(request, await listSites(db, accountOf(request), request.params.projectId)),
  )

  app.post(
    '/projects/:projectId/sites',
    {
      schema: {
        operationId: 'createProjectSite',
        tags,
        params: ProjectParams,
        body: SiteBody,
        response: { 201: Sites, ...writeErrorResponses, ...conflictResponse },
      },
    },
    async (request, reply) => {
      const site = await createSite(db, accountOf(request), request.body, limits, request.params.projectId)
      return reply.code(201).send(await envelope(request, site))
    },
  )

  app.put(
    '/projects/:projectId/sites/:siteId',
    {
      schema: {
        operationId: 'updateProjectSite',
        tags,
        params: ProjectSiteParams,
        body: SiteBody,
        response: { 200: Sites, ...writeErrorResponses, ...conflictResponse },
      },
    },
    async (request) => envelope(request, await updateSite(db, accountOf(request), request.params.siteId, request.body, limits, request.params.projectId)),
  )

  // Reading one site of a project is not in SPEC.md, but its links make clients expect it.
  app.get(
    '/projects/:projectId/sites/:siteId',
    { schema: { operationId: 'getProjectSite', tags, params: ProjectSiteParams, response: { 200: Sites, ...errorResponses } } },
    async (request) => {
      const site = await getSite(db, accountOf(request), request.params.siteId)
      if (site.project_id !== request.params.projectId) throw new NotFoundError()
      return envelope(request, site)
    },
  )
}
