import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { MAX_ACTIVITY_PAGE, listActivity, readActivityFilter, type ActivityPage } from '../activity/activity-query.js'
import type { ActivityEntry } from '../activity/activity-store.js'
import { accountOf } from '../auth/caller.js'
import { getSite } from '../sites/sites.js'
import { baseOf, type PlatformDeps } from './deps.js'
import { SiteParams, errorResponses } from './schemas.js'

const Change = Type.Union([Type.Array(Type.Unknown(), { minItems: 2, maxItems: 2 }), Type.Literal('changed')], {
  description: '[before, after]; "changed" for a secret, whose values are never recorded',
})
const EntryOut = Type.Object({
  id: Type.String(),
  occurred_at: Type.String({ description: 'ISO 8601, UTC' }),
  account_id: Type.String(),
  actor: Type.Object({
    type: Type.String({ enum: ['platform_credential', 'token', 'console', 'operator', 'cli', 'system'] }),
    id: Type.String(),
    label: Type.String(),
  }),
  action: Type.String({ description: 'noun.verb, as site.updated or rule.reordered' }),
  target: Type.Object({ type: Type.String(), id: Type.String(), site_id: Type.Union([Type.String(), Type.Null()]) }),
  changes: Type.Record(Type.String(), Change),
  request: Type.Union([
    Type.Object({
      id: Type.String(),
      address: Type.Union([Type.String(), Type.Null()]),
      user_agent: Type.Union([Type.String(), Type.Null()]),
      idempotency_key: Type.Union([Type.String(), Type.Null()]),
    }),
    Type.Null(),
  ]),
})
const ActivityOut = Type.Object({
  success: Type.Literal(true),
  Activity: Type.Array(EntryOut),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'the next (older) page; null on the last' }),
  next: Type.Union([Type.String(), Type.Null()], { description: 'the URL of the next page, filters kept' }),
})
const ActivityQuery = Type.Object({
  action: Type.Optional(Type.String({ description: 'an action (site.updated) or a prefix of actions (rule.*)' })),
  // Not an enum of ACTOR_TYPES: it may carry :<id>, and readActor (activity-query.ts) trims it and lists the types.
  actor: Type.Optional(Type.String({ description: 'an actor type (token), or type:id (token:12)' })),
  target_type: Type.Optional(Type.String()),
  target_id: Type.Optional(Type.String()),
  since: Type.Optional(Type.String({ description: 'ISO 8601: entries at or after' })),
  until: Type.Optional(Type.String({ description: 'ISO 8601: entries before' })),
  cursor: Type.Optional(Type.String({ description: 'next_cursor of the previous page' })),
  // Not an integer: readLimit (activity-query.ts) reads "" as the default and digits only, where coercion would take "1e2" or "0x10".
  limit: Type.Optional(Type.String({ description: `1 to ${MAX_ACTIVITY_PAGE}; default 50` })),
})
const tags = ['activity']

export const activityRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, deps) => {
  const { db } = deps

  app.get(
    '/activity',
    { schema: { operationId: 'listActivity', tags, querystring: ActivityQuery, response: { 200: ActivityOut, ...errorResponses } } },
    async (request) => {
      const page = await listActivity(db, { accountId: accountOf(request) }, readActivityFilter(request.query))
      return pageView(request, page, deps)
    },
  )

  app.get(
    '/sites/:siteId/activity',
    { schema: { operationId: 'listSiteActivity', tags, params: SiteParams, querystring: ActivityQuery, response: { 200: ActivityOut, ...errorResponses } } },
    async (request) => {
      const filter = readActivityFilter(request.query)
      const site = await getSite(db, accountOf(request), request.params.siteId)
      return pageView(request, await listActivity(db, { accountId: accountOf(request), siteId: site.id }, filter), deps)
    },
  )
}

function pageView(request: FastifyRequest, page: ActivityPage, deps: PlatformDeps) {
  const query = new URLSearchParams(request.query as Record<string, string>)
  let next: string | null = null
  if (page.nextCursor !== null) {
    query.set('cursor', page.nextCursor)
    next = `${baseOf(request, deps)}${request.url.split('?')[0]}?${query.toString()}`
  }
  return { success: true as const, Activity: page.entries.map(entryView), next_cursor: page.nextCursor, next }
}

/** An entry as both the API and the console's raw view show it. */
export function entryView(entry: ActivityEntry) {
  return {
    id: entry.id,
    occurred_at: entry.occurredAt.toISOString(),
    account_id: entry.accountId,
    actor: entry.actor,
    action: entry.action,
    target: { type: entry.target.type, id: entry.target.id, site_id: entry.target.siteId },
    changes: entry.changes,
    request: entry.request && {
      id: entry.request.id,
      address: entry.request.address,
      user_agent: entry.request.userAgent,
      idempotency_key: entry.request.idempotencyKey,
    },
  }
}
