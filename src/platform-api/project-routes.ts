import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { accountLimits } from '../accounts/object-limits.js'
import { createProject, deleteProject, getProject, listProjects, updateProject } from '../sites/projects.js'
import { baseOf, type PlatformDeps } from './deps.js'
import { Envelope, NullableString, ProjectParams, SuccessBody, errorResponses, writeErrorResponses } from './schemas.js'
import { ProjectOut, projectView } from './views.js'
import { accountOf } from '../auth/caller.js'
import { IdempotencyHeaders, answerOnce } from '../http/idempotent-answer.js'

const ProjectBody = Type.Object({
  id: Type.Optional(NullableString()),
  name: Type.Optional(NullableString()),
  created_at: Type.Optional(NullableString()),
})
const Projects = Envelope('Projects', ProjectOut)
const tags = ['projects']

export const projectRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, deps) => {
  const { db } = deps
  const limits = accountLimits(deps.config)

  app.get('/projects', { schema: { operationId: 'listProjects', tags, response: { 200: Projects, ...errorResponses } } }, async (request) => {
    const projects = await listProjects(db, accountOf(request))
    return { success: true as const, Projects: projects.map((p) => projectView(p, baseOf(request, deps))) }
  })

  app.post(
    '/projects',
    { schema: { operationId: 'createProject', tags, headers: IdempotencyHeaders, body: ProjectBody, response: { 201: Projects, ...writeErrorResponses } } },
    async (request, reply) =>
      answerOnce(request, reply, deps, {
        run: () => createProject(db, accountOf(request), request.body, limits),
        render: (project) => ({ status: 201, body: { success: true as const, Projects: [projectView(project, baseOf(request, deps))] } }),
      }),
  )

  app.get(
    '/projects/:projectId',
    { schema: { operationId: 'getProject', tags, params: ProjectParams, response: { 200: Projects, ...errorResponses } } },
    async (request) => {
      const project = await getProject(db, accountOf(request), request.params.projectId)
      return { success: true as const, Projects: [projectView(project, baseOf(request, deps))] }
    },
  )

  app.put(
    '/projects/:projectId',
    { schema: { operationId: 'updateProject', tags, params: ProjectParams, body: ProjectBody, response: { 200: Projects, ...writeErrorResponses } } },
    async (request) => {
      const project = await updateProject(db, accountOf(request), request.params.projectId, request.body)
      return { success: true as const, Projects: [projectView(project, baseOf(request, deps))] }
    },
  )

  // DELETE answers 200 with a body: clients read `success` from it (docs/compatibility.md).
  app.delete(
    '/projects/:projectId',
    { schema: { operationId: 'deleteProject', tags, params: ProjectParams, response: { 200: SuccessBody, ...errorResponses } } },
    async (request) => {
      await deleteProject(db, accountOf(request), request.params.projectId)
      return { success: true as const }
    },
  )
}
