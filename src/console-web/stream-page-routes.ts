import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { streamWithBatches } from '../streams/stream-overview.js'
import type { ConsoleDeps } from './deps.js'
import { page } from './layout.js'
import { OffsetQuery, StreamParams } from './page-params.js'
import { accountOfSession, queryInt, sendPage } from './pages.js'
import { streamPageBody } from './stream-page-views.js'

const BATCHES_PER_PAGE = 20

/** A stream: its status and its batches, newest first, with what each stage refused and why. */
export const streamPageRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, { db }) => {
  app.get('/console/streams/:streamId', { schema: { hide: true, params: StreamParams, querystring: OffsetQuery } }, async (request, reply) => {
    const offset = queryInt(request.query.offset, 0)
    const view = await streamWithBatches(db, accountOfSession(request), request.params.streamId, { offset, limit: BATCHES_PER_PAGE })
    const body = streamPageBody({ ...view, offset, perPage: BATCHES_PER_PAGE })
    const trail: [string, string][] = [
      ['Overview', '/console'],
      [view.stream.name, `/console/streams/${view.stream.id}`],
    ]
    return sendPage(reply, page({ title: view.stream.name, session: request.consoleSession, trail, body }))
  })
}
