import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { getBatch, listBatches } from '../streams/batch-store.js'
import { BatchResource, PageLinks, batchResource, jsonApiErrors, pageLinks } from './json-api.js'
import type { StreamDeps } from './deps.js'
import { MAX_PAGE, PageQuery } from './stream-routes.js'
import { accountOf } from '../auth/caller.js'

const errors = jsonApiErrors(400, 401, 404, 429, 500)
const tags = ['batches']

export const batchRoutes: FastifyPluginAsyncTypebox<StreamDeps> = async (app, { db, config }) => {
  const prefix = config.STREAM_PREFIX

  app.get(
    '/streams/:streamId/batches',
    {
      schema: {
        operationId: 'listBatches',
        tags,
        params: Type.Object({ streamId: Type.String() }),
        querystring: PageQuery,
        response: { 200: Type.Object({ data: Type.Array(BatchResource), links: PageLinks, meta: Type.Object({ total: Type.Integer() }) }), ...errors },
      },
    },
    async (request) => {
      const offset = request.query['page[offset]'] ?? 0
      const limit = Math.min(request.query['page[limit]'] ?? MAX_PAGE, MAX_PAGE)
      const { batches, total } = await listBatches(db, accountOf(request), request.params.streamId, offset, limit)
      const path = `${prefix}/streams/${request.params.streamId}/batches`
      return { data: batches.map((b) => batchResource(b, prefix)), links: pageLinks(path, offset, limit, total), meta: { total } }
    },
  )

  app.get(
    '/streams/:streamId/batches/:batchId',
    {
      schema: {
        operationId: 'getBatch',
        tags,
        params: Type.Object({ streamId: Type.String(), batchId: Type.String() }),
        response: { 200: Type.Object({ data: BatchResource }), ...errors },
      },
    },
    async (request) => ({ data: batchResource(await getBatch(db, accountOf(request), request.params.streamId, request.params.batchId), prefix) }),
  )
}
