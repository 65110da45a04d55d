import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { operatorOverview } from '../accounts/operator-overview.js'
import { poolUsage } from '../db/database.js'
import { isId } from '../db/ids.js'
import { setStreamStatus } from '../streams/streams.js'
import type { ConsoleDeps } from './deps.js'
import { page } from './layout.js'
import { OperatorQuery, StreamParams, StreamStatusForm } from './page-params.js'
import { queryText, sendPage } from './pages.js'
import { operatorPage } from './operator-views.js'

const ACCOUNTS_SHOWN = 100
const RUNS_SHOWN = 200
const SITES_SHOWN = 100
const STREAMS_SHOWN = 200
const CHANNELS_SHOWN = 100
const DAY_MS = 24 * 3600_000

const config = { console: 'operator' as const }

/**
 * The operator's view (docs/design.md section 10): every account's objects, the runs under way, the
 * channels held by a safety stop or below their readiness threshold, the sites that failed or ran
 * slowest in the last 24 hours, every stream's state with the operator's switches (as
 * `streams set-status` of the CLI), and this process's capacity.
 */
export const operatorRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  const { db, clock } = deps

  app.get('/console/operator', { config, schema: { hide: true, querystring: OperatorQuery } }, async (request, reply) => {
    const { query } = request
    const accountFilter = queryText(query.account, 20)
    const streamAccount = isId(accountFilter) ? accountFilter : undefined
    const now = clock()
    const shown = { accounts: ACCOUNTS_SHOWN, runs: RUNS_SHOWN, sites: SITES_SHOWN, streams: STREAMS_SHOWN, channels: CHANNELS_SHOWN }
    const overview = await operatorOverview(db, { now, windowMs: DAY_MS, streamAccount, shown })
    const pool = poolUsage(db)
    const health = { ...(pool ? { 'database pool': pool } : {}), ...deps.health() }
    const session = request.consoleSession!
    const body = operatorPage(overview, { now, health, session, streamAccount: streamAccount ?? '', changed: queryText(query.changed, 20) })
    return sendPage(reply, page({ title: 'Operator', session, body }))
  })

  app.post(
    '/console/operator/streams/:streamId/status',
    { config, schema: { hide: true, params: StreamParams, body: StreamStatusForm } },
    async (request, reply) => {
      const { streamId } = request.params
      const { status, account } = request.body
      const stream = await setStreamStatus(db, streamId, status ?? '', clock())
      const filter = account !== undefined && isId(account) ? `&account=${account}` : ''
      request.log.info({ streamId: stream.id, accountId: stream.account_id, status: stream.status }, 'operator set a stream status in the console')
      return reply.redirect(`/console/operator?changed=${stream.id}${filter}#stream-${stream.id}`, 303)
    },
  )
}
