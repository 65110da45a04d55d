import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { RuleRow } from '../db/schema.js'
import { BadRequestError } from '../errors.js'
import { moveRule } from '../rule-sets/rule-editing.js'
import { deleteRule, listRules, updateRule, type RuleScopeOf } from '../rule-sets/rule-sets.js'
import type { ConsoleDeps } from './deps.js'
import { page } from './layout.js'
import { RuleItemParams, RuleScopeParams, RulesQuery } from './page-params.js'
import { accountOfSession, queryText, requirePlatformCredential, sendPage } from './pages.js'
import { RULE_SCOPE_PREFIXES, ruleScopeRef, rulesPath, type RuleParams } from './rule-links.js'
import { rulesPage, rulesTrail, scopeName, type RulesPageData } from './rule-page-views.js'

// A site's and a channel's rules page, and the buttons of each rule: move up or down,
// enable or disable, delete. Each button posts a form with the session's CSRF token (checked by the
// console plugin) and comes back to the list with a notice; like the platform interface's rule
// routes, a change takes the platform credential. Another account's site, channel or rule is a 404.

/** Where a saved rule shows: a channel's feed after its next export; a site's intermediate stage at once. */
const WHERE_SAVED = {
  channel: "The channel's feed follows with its next export (start a run from the site page).",
  site: 'Product reads of the intermediate stage show it now; the feeds follow with their next export (start a run from the site page).',
}

const NOTICES: Record<string, (position: string, channel: boolean) => string> = {
  saved: (position, channel) => `Rule ${position} was saved. ${channel ? WHERE_SAVED.channel : WHERE_SAVED.site}`,
  moved: (position) => `The rule is now rule ${position}.`,
  enabled: (position) => `Rule ${position} is enabled.`,
  disabled: (position) => `Rule ${position} is disabled: it no longer runs.`,
  deleted: () => 'The rule was deleted; the rules after it moved up.',
}

/** The notice of the change a redirect names (`done`, and the rule it was made to). */
function noticeOf(query: RulesQuery, { scope, rules }: { scope: RuleScopeOf; rules: RuleRow[] }): string | undefined {
  const done = queryText(query.done, 20)
  const position = String(rules.findIndex((rule) => rule.id === queryText(query.rule, 40)) + 1)
  if (!Object.hasOwn(NOTICES, done) || (position === '0' && done !== 'deleted')) return undefined
  return NOTICES[done]?.(position, scope.channel !== null)
}

/** The session's account, when it signed in with the platform credential (as rule changes take). */
function changer(request: FastifyRequest): string {
  const accountId = accountOfSession(request)
  requirePlatformCredential(request, 'Changing rules', 'each rule route of the platform interface (…/rules)')
  return accountId
}

function formText(request: FastifyRequest, name: string): string {
  const value = (request.body as Record<string, unknown> | undefined)?.[name]
  return typeof value === 'string' ? value : ''
}

export const rulePageRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, { db }) => {
  for (const prefix of RULE_SCOPE_PREFIXES) {
    app.get(`${prefix}/rules`, { schema: { hide: true, params: RuleScopeParams, querystring: RulesQuery } }, async (request, reply) => {
      const accountId = accountOfSession(request)
      const { query } = request
      const listed = await listRules(db, accountId, ruleScopeRef(request.params))
      const { scope, rules } = listed
      const direction = queryText(query.direction, 8)
      const moved: RulesPageData['moved'] =
        queryText(query.done, 20) === 'moved' && (direction === 'up' || direction === 'down') ? { id: queryText(query.rule, 40), direction } : undefined
      const body = rulesPage({ scope, rules, session: request.consoleSession!, notice: noticeOf(query, listed), moved })
      const title = `Rules of ${scopeName(scope)}`
      return sendPage(reply, page({ title, session: request.consoleSession, trail: rulesTrail(scope), body }))
    })

    app.post(`${prefix}/rules/:ruleId/move`, { schema: { hide: true, params: RuleItemParams } }, async (request, reply) => {
      const accountId = changer(request)
      const { params } = request
      const direction = formText(request, 'direction')
      if (direction !== 'up' && direction !== 'down') throw new BadRequestError('direction: must be up or down')
      const rules = await moveRule(db, accountId, ruleScopeRef(params), params.ruleId, direction)
      const moved = rules.find((rule) => rule.id === params.ruleId)
      // No fragment: a page with a target element runs no autofocus, which keeps the moved rule's button focused.
      return reply.redirect(`${backTo(moved, params)}?done=moved&rule=${moved?.id ?? ''}&direction=${direction}`, 303)
    })

    app.post(`${prefix}/rules/:ruleId/enabled`, { schema: { hide: true, params: RuleItemParams } }, async (request, reply) => {
      const accountId = changer(request)
      const { params } = request
      const enabled = formText(request, 'enabled')
      if (enabled !== 'true' && enabled !== 'false') throw new BadRequestError('enabled: must be true or false')
      const rule = await updateRule(db, accountId, ruleScopeRef(params), params.ruleId, { enabled: enabled === 'true' })
      return reply.redirect(`${backTo(rule, params)}?done=${rule.enabled ? 'enabled' : 'disabled'}&rule=${rule.id}#rule-${rule.id}`, 303)
    })

    app.post(`${prefix}/rules/:ruleId/delete`, { schema: { hide: true, params: RuleItemParams } }, async (request, reply) => {
      const accountId = changer(request)
      const { params } = request
      await deleteRule(db, accountId, ruleScopeRef(params), params.ruleId)
      return reply.redirect(`${rulesPath(encodeURIComponent(params.siteId), params.channelId && encodeURIComponent(params.channelId))}?done=deleted`, 303)
    })
  }
}

/** The rules page a change comes back to: its rule's scope (by ids, whatever the path named the site by). */
function backTo(rule: RuleRow | undefined, params: RuleParams): string {
  if (rule) return rulesPath(rule.site_id, rule.channel_id)
  return rulesPath(encodeURIComponent(params.siteId), params.channelId && encodeURIComponent(params.channelId))
}
