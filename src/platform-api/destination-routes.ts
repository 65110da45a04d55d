import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { accountOf } from '../auth/caller.js'
import { listDeliveryAttempts, testDestination } from '../channels/destination-checks.js'
import type { PlatformDeps } from './deps.js'
import { Envelope, errorResponses } from './schemas.js'

const ChannelParams = Type.Object({ siteId: Type.String(), channelId: Type.String() })
const DestinationParams = Type.Composite([
  ChannelParams,
  Type.Object({ destinationId: Type.String({ description: "a key of the channel's feed_destinations" }) }),
])
const TestOut = Type.Object({
  destination_id: Type.String(),
  ok: Type.Boolean(),
  remote_path: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
})
const AttemptOut = Type.Object({
  id: Type.String(),
  push_id: Type.String(),
  attempt: Type.Integer(),
  filename: Type.String(),
  destination: Type.String({ description: 'the URL, or sftp://user@host:port/directory (never a credential)' }),
  started_at: Type.String({ description: 'ISO 8601' }),
  duration_ms: Type.Integer(),
  bytes: Type.Union([Type.Integer(), Type.Null()]),
  remote_path: Type.Union([Type.String(), Type.Null()]),
  outcome: Type.String({ enum: ['delivered', 'retrying', 'failed'] }),
  error: Type.Union([Type.String(), Type.Null()]),
})
const PageQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  offset: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 }),
})
const tags = ['channels']

/** A channel's file server destinations: a test, and every delivery attempt of its files. */
export const destinationRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, deps) => {
  const { db } = deps

  app.post(
    '/sites/:siteId/channels/:channelId/destinations/:destinationId/test',
    { schema: { operationId: 'testDestination', tags, params: DestinationParams, response: { 200: Envelope('Tests', TestOut), ...errorResponses } } },
    async (request) => {
      const { siteId, channelId, destinationId } = request.params
      const options = { guard: deps.outbound, credentials: deps.credentials, timeoutMs: deps.config.PUSH_TIMEOUT_SECONDS * 1000 }
      const test = await testDestination(db, { accountId: accountOf(request), siteSegment: siteId, channelId, destinationId }, options)
      return {
        success: true as const,
        Tests: [{ destination_id: test.destinationId, ok: test.ok, remote_path: test.remotePath, duration_ms: test.durationMs, error: test.error }],
      }
    },
  )

  app.get(
    '/sites/:siteId/channels/:channelId/deliveries',
    {
      schema: {
        operationId: 'listDeliveryAttempts',
        tags,
        params: ChannelParams,
        querystring: PageQuery,
        response: { 200: Envelope('Attempts', AttemptOut), ...errorResponses },
      },
    },
    async (request) => {
      const { siteId, channelId } = request.params
      const attempts = await listDeliveryAttempts(db, { accountId: accountOf(request), siteSegment: siteId, channelId }, request.query)
      return {
        success: true as const,
        Attempts: attempts.map((a) => ({
          id: a.id,
          push_id: a.pushId,
          attempt: a.attempt,
          filename: a.filename,
          destination: a.destination,
          started_at: a.startedAt.toISOString(),
          duration_ms: a.durationMs,
          bytes: a.bytes,
          remote_path: a.remotePath,
          outcome: a.outcome,
          error: a.error,
        })),
      }
    },
  )
}
