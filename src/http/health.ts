import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { sql } from 'kysely'
import type { Db } from '../db/database.js'

const Health = Type.Object({ status: Type.String(), database: Type.String() })

// Load balancers and the Docker HEALTHCHECK poll this without credentials.
export const healthRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, { db }) => {
  app.get('/healthz', { schema: { tags: ['health'], security: [], response: { 200: Health, 503: Health } } }, async (request, reply) => {
    try {
      await sql`SELECT 1`.execute(db)
      return { status: 'ok', database: 'up' }
    } catch (error) {
      request.log.warn({ err: error }, 'health check: database unreachable')
      return reply.code(503).send({ status: 'unavailable', database: 'down' })
    }
  })
}
