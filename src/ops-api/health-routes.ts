import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Db } from '../db/database.js'
import { checkDatabaseHealth } from '../db/database-health.js'
import type { ConnectionSlots } from '../db/connection-slots.js'

const Usage = Type.Object({ size: Type.Integer(), busy: Type.Integer(), waiting: Type.Integer() })
const Health = Type.Object({
  status: Type.String({ description: 'ok, saturated (every connection busy and requests waiting for one) or unavailable' }),
  database: Type.String(),
  pool: Type.Optional(Usage),
  uploads: Type.Optional(Usage),
  reads: Type.Optional(Usage),
  spool: Type.Optional(
    Type.Object({
      bytes: Type.Integer({ description: 'bytes of upload bodies received and waiting to be written, in memory and on disk' }),
      memoryBytes: Type.Integer(),
      accounts: Type.Integer(),
      receiving: Type.Integer({ description: 'upload bodies being received' }),
    }),
  ),
})

// How long the health check waits for a connection of its own when the pool is saturated.
const PROBE_TIMEOUT_MS = 2000

// Load balancers and the Docker HEALTHCHECK poll this without credentials.
export interface HealthDeps {
  db: Db
  uploadSlots: ConnectionSlots
  readSlots: ConnectionSlots
  /** The upload bodies received and waiting to be written (the streams' SpoolBudget). */
  uploadSpool: { readonly usage: { bytes: number; memoryBytes: number; accounts: number; receiving: number } }
}

export const healthRoutes: FastifyPluginAsyncTypebox<HealthDeps> = async (app, { db, uploadSlots, readSlots, uploadSpool }) => {
  const schema = {
    operationId: 'getHealth',
    summary: 'Health of this process',
    description:
      'For load balancers and the Docker HEALTHCHECK, without credentials. 200 while the database answers; 503 `unavailable` ' +
      'when it does not, and 503 `saturated` (answered without waiting for a connection) while every pooled connection is busy and ' +
      'requests wait for one. The body shows the pool, the upload and read slots, and the upload bodies held.',
    tags: ['health'],
    security: [],
    response: {
      200: { ...Health, description: 'The process can take work' },
      503: { ...Health, description: 'The database is unreachable, or the pool is saturated' },
    },
  }
  app.get('/healthz', { schema }, async (request, reply) => {
    const { error, ...health } = await checkDatabaseHealth(db, PROBE_TIMEOUT_MS)
    if (error) request.log.warn({ err: error }, 'health check: database unreachable')
    const body = { ...health, uploads: uploadSlots.usage, reads: readSlots.usage, spool: uploadSpool.usage }
    return reply.code(health.status === 'ok' ? 200 : 503).send(body)
  })
}
