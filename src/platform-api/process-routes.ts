import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { getRun, requestRun } from '../jobs/run-requests.js'
import { links } from './envelope.js'
import { baseOf, type PlatformDeps } from './deps.js'
import { Links, NullableString, SiteParams, errorResponses, writeErrorResponses } from './schemas.js'
import { accountOf } from '../auth/caller.js'
import { IdempotencyHeaders, answerOnce } from '../http/idempotent-answer.js'

const ProcessBody = Type.Object({
  // Not an enum of ACTIONS: requestRun (run-requests.ts) words the refusals docs/interface.md gives ("action is required: one of …").
  action: Type.Optional(NullableString({ description: 'import, export, channel, export-all or all' })),
  // A string or a number (docs/compatibility.md), "" none: requestRun checks the id, a bigint past a JSON number's precision.
  id: Type.Optional(NullableString({ description: 'export id or channel id (integer); required for export and channel' })),
})
const ProcessOut = Type.Object({
  success: Type.Literal(true),
  process_id: Type.String(),
  estimated_duration: Type.Number({ description: 'seconds, from the recent runs of this action on the site; 0 without history' }),
  message: Type.String(),
})
const StatusOut = Type.Object({
  success: Type.Literal(true),
  status: Type.String({ enum: ['queued', 'running', 'success', 'failed'] }),
  message: Type.String(),
  links: Links,
})
const StatusParams = Type.Object({ siteId: Type.String(), pid: Type.String() })
const tags = ['processing']

export const processRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, deps) => {
  const { db } = deps

  app.post(
    '/process/:siteId',
    {
      config: { auth: 'x-auth-token-or-bearer' },
      schema: {
        operationId: 'requestRun',
        tags,
        headers: IdempotencyHeaders,
        params: SiteParams,
        body: ProcessBody,
        response: { 200: ProcessOut, ...writeErrorResponses },
      },
    },
    async (request, reply) =>
      answerOnce(request, reply, deps, {
        run: () => requestRun(db, deps.runs, accountOf(request), request.params.siteId, request.body),
        render: (run) => ({
          status: 200,
          body: { success: true as const, process_id: run.pid, estimated_duration: run.estimatedDuration, message: run.message },
        }),
      }),
  )

  // Some clients ask with POST (docs/compatibility.md): both methods answer the same.
  const status = async (request: FastifyRequest<{ Params: { siteId: string; pid: string } }>) => {
    const { site, run } = await getRun(db, accountOf(request), request.params.siteId, request.params.pid)
    const relations: Record<string, string> = {
      self: `/platform/v2/sites/${site.id}/status/${run.pid}`,
      site: `/platform/v2/sites/${site.id}`,
    }
    if (run.status === 'failed') relations.errors = `/platform/v2/sites/${site.id}/errors?pid=${run.pid}`
    return { success: true as const, status: run.status, message: run.message, links: links(baseOf(request, deps), relations) }
  }
  const statusSchema = { tags, params: StatusParams, response: { 200: StatusOut, ...errorResponses } }
  app.get('/sites/:siteId/status/:pid', { schema: { ...statusSchema, operationId: 'getRunStatus' } }, status)
  app.post('/sites/:siteId/status/:pid', { schema: { ...statusSchema, operationId: 'getRunStatusByPost' } }, status)
}
