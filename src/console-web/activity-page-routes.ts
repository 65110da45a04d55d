import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { listActivity, readActivityFilter, type ActivityFilter, type ActivityPage, type ActivityScopeFilter } from '../activity/activity-query.js'
import type { Db } from '../db/database.js'
import { isId } from '../db/ids.js'
import { refuseNulParameters } from '../http/nul-guard.js'
import { BadRequestError } from '../errors.js'
import { getSite } from '../sites/sites.js'
import { ACTIVITY_QUERY_FIELDS, activityPage, type ActivityQuery } from './activity-page-views.js'
import type { ConsoleDeps } from './deps.js'
import { html, type Html } from './html.js'
import { page } from './layout.js'
import { ActivityPageQuery, SiteParams } from './page-params.js'
import { accountOfSession, queryText, sendPage } from './pages.js'

const ENTRIES_PER_PAGE = 50
const operatorConfig = { console: 'operator' as const }

/** The filters of the query, trimmed; `account` only on the operator's page. */
function readQuery(raw: ActivityPageQuery, operator: boolean): { query: ActivityQuery; cursor: string } {
  const query = Object.fromEntries(ACTIVITY_QUERY_FIELDS.map((name) => [name, queryText(raw[name], 300).trim()])) as unknown as ActivityQuery
  if (!operator) query.account = ''
  return { query, cursor: queryText(raw.cursor, 100).trim() }
}

type ScopeOf = (query: ActivityQuery) => ActivityScopeFilter

/** The operator's scope: every account, or the one the `account` filter names. */
const accountFilterScope: ScopeOf = ({ account }) => {
  if (account !== '' && !isId(account)) throw new BadRequestError(`account: "${account.slice(0, 100)}" is not an account id (a whole number, as 12)`)
  return { accountId: account === '' ? null : account }
}

/** A page of entries, or the message of a wrong filter (shown on the page, with the form, as a 400). */
async function loadActivity(db: Db, scopeOf: ScopeOf, query: ActivityQuery, cursor: string): Promise<ActivityPage & { error?: string }> {
  let filter: ActivityFilter
  let scope: ActivityScopeFilter
  try {
    // Postgres text holds no NUL: refused here, as the API's door refuses it, not as a 500 of the query.
    refuseNulParameters({ ...query, cursor }, 'query parameter')
    scope = scopeOf(query)
    // A time typed without a zone is UTC, as the page shows its times (readActivityFilter reads it so).
    filter = readActivityFilter({ ...query, cursor }, ENTRIES_PER_PAGE)
  } catch (error) {
    if (error instanceof BadRequestError) return { entries: [], nextCursor: null, error: error.message }
    throw error
  }
  return listActivity(db, scope, filter)
}

interface ActivityView {
  title: string
  trail?: [string, string][]
  intro: Html
  path: string
  operator: boolean
}

async function showActivity(db: Db, request: FastifyRequest, reply: FastifyReply, raw: ActivityPageQuery, view: ActivityView, scopeOf: ScopeOf) {
  const { query, cursor } = readQuery(raw, view.operator)
  const { entries, nextCursor, error } = await loadActivity(db, scopeOf, query, cursor)
  const listing = activityPage({ path: view.path, query, paged: cursor !== '', entries, nextCursor, error, operator: view.operator })
  const body = html`${view.intro} ${listing}`
  const frame = page({ title: view.title, session: request.consoleSession, trail: view.trail ?? [], body })
  return sendPage(reply, frame, error === undefined ? 200 : 400)
}

/**
 * The activity log in the console: who changed what, when and through which request,
 * with each change's before and after. An account's changes, one site's, and every account's for
 * the operator; newest first, a page of 50 (`limit` asks for another size), filtered on the server.
 */
export const activityPageRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, { db }) => {
  app.get('/console/activity', { schema: { hide: true, querystring: ActivityPageQuery } }, async (request, reply) => {
    const accountId = accountOfSession(request)
    const intro = html`<p class="muted">
      Every change to the account, whoever made it: the platform and stream interfaces, this console, the operator, the CLI and the platform's own jobs.
    </p>`
    const trail: [string, string][] = [
      ['Overview', '/console'],
      ['Activity', '/console/activity'],
    ]
    const view = { title: 'Activity', trail, intro, path: '/console/activity', operator: false }
    return showActivity(db, request, reply, request.query, view, () => ({ accountId }))
  })

  app.get('/console/sites/:siteId/activity', { schema: { hide: true, params: SiteParams, querystring: ActivityPageQuery } }, async (request, reply) => {
    const accountId = accountOfSession(request)
    const { siteId } = request.params
    const site = await getSite(db, accountId, siteId)
    const path = `/console/sites/${site.id}/activity`
    const trail: [string, string][] = [
      ['Overview', '/console'],
      [site.title, `/console/sites/${site.id}`],
      ['Activity', path],
    ]
    const intro = html`<p class="muted">Changes to site #${site.id} and to what belongs to it (channels, rules, tags, data sources, runs).</p>`
    const view = { title: `Activity of ${site.title}`, trail, intro, path, operator: false }
    return showActivity(db, request, reply, request.query, view, () => ({ accountId, siteId: site.id }))
  })

  app.get('/console/operator/activity', { config: operatorConfig, schema: { hide: true, querystring: ActivityPageQuery } }, async (request, reply) => {
    const intro = html`<p class="muted">
      The changes of every account, newest first; the account filter shows one account's. <a href="/console/operator">Back to the operator page</a>
    </p>`
    const view = { title: 'Activity of every account', intro, path: '/console/operator/activity', operator: true }
    return showActivity(db, request, reply, request.query, view, accountFilterScope)
  })
}
