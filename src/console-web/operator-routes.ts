import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { accountObjectCounts, channelsNeedingAttention, streamStatesOfAllAccounts } from '../accounts/operator-overview.js'
import { activeRunsOfAllAccounts, siteRunStats } from '../runs/operator-runs.js'
import { poolUsage } from '../db/database.js'
import { isId } from '../db/ids.js'
import { setStreamStatus } from '../streams/streams.js'
import type { ConsoleDeps } from './deps.js'
import { html } from './html.js'
import { page } from './layout.js'
import { OperatorQuery, StreamParams } from './page-params.js'
import { queryText, sendPage } from './pages.js'
import { accountsSection, attentionSection, healthSection, runsSection, siteStatsSection, streamsSection } from './operator-views.js'

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
    const since = new Date(now.getTime() - DAY_MS)
    const [accounts, runs, failing, slowest, streams, channels] = await Promise.all([
      accountObjectCounts(db, ACCOUNTS_SHOWN),
      activeRunsOfAllAccounts(db, RUNS_SHOWN),
      siteRunStats(db, since, 'failing', SITES_SHOWN),
      siteRunStats(db, since, 'slowest', SITES_SHOWN),
      streamStatesOfAllAccounts(db, STREAMS_SHOWN, streamAccount),
      channelsNeedingAttention(db, CHANNELS_SHOWN),
    ])
    const changed = queryText(query.changed, 20)
    const changedStream = changed ? streams.rows.find((stream) => stream.id === changed) : undefined
    const pool = poolUsage(db)
    const health = { ...(pool ? { 'database pool': pool } : {}), ...deps.health() }
    const session = request.consoleSession!
    const notice = changedStream
      ? html`<p class="live" role="status">Stream #${changedStream.id} (${changedStream.name}) is now ${changedStream.status}.</p>`
      : ''
    const activity = html`<p><a href="/console/operator/activity">Activity of every account</a>: who changed what, and when.</p>`
    const body = html`${notice} ${activity} ${healthSection(health)} ${accountsSection(accounts)} ${runsSection(runs, now)} ${attentionSection(channels)}
    ${siteStatsSection('failing', 'Failing sites of the last 24 hours', failing)} ${siteStatsSection('slowest', 'Slowest sites of the last 24 hours', slowest)}
    ${streamsSection(streams, session, streamAccount ?? '')}`
    return sendPage(reply, page({ title: 'Operator', session, body }))
  })

  app.post('/console/operator/streams/:streamId/status', { config, schema: { hide: true, params: StreamParams } }, async (request, reply) => {
    const { streamId } = request.params
    const { status, account } = (request.body ?? {}) as { status?: unknown; account?: unknown }
    const stream = await setStreamStatus(db, streamId, typeof status === 'string' ? status : '', clock())
    const filter = typeof account === 'string' && isId(account) ? `&account=${account}` : ''
    request.log.info({ streamId: stream.id, accountId: stream.account_id, status: stream.status }, 'operator set a stream status in the console')
    return reply.redirect(`/console/operator?changed=${stream.id}${filter}#stream-${stream.id}`, 303)
  })
}
