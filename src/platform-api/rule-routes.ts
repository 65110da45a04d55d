import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { accountOf } from '../auth/caller.js'
import { IdempotencyHeaders, answerOnce } from '../http/idempotent-answer.js'
import { previewRules } from '../rule-sets/rule-preview.js'
import { createRule, deleteRule, getRule, listRules, reorderRules, updateRule, type RuleScopeRef } from '../rule-sets/rule-sets.js'
import { baseOf, type PlatformDeps } from './deps.js'
import { PreviewOut, RuleOut, ruleView } from './rule-views.js'
import { Envelope, SuccessBody, errorResponses, readBudgetResponses, writeErrorResponses } from './schemas.js'

// Transformation rules: a site's (its intermediate stage) and each channel's, with their
// order and a preview. The same routes under a site and under one of its channels.

// Every field is read by readRule (src/rules/rule-input.ts), whose messages name the field and say what it takes.
const RuleBody = Type.Object({
  // Not NullableBoolean, whose coercion takes "true" and 1: ruleFlag (rule-values.ts) takes true or false only ("enabled: must be true or false").
  enabled: Type.Optional(Type.Unknown({ description: 'true (default) or false' })),
  description: Type.Optional(Type.Unknown({ description: 'at most 2,000 characters' })),
  attribute: Type.Optional(Type.Unknown({ description: 'the attribute the actions write (created when the stage has none)' })),
  if: Type.Optional(Type.Unknown({ description: 'null, or {"all": [...]} / {"any": [...]} of conditions and groups, two levels deep' })),
  then: Type.Optional(Type.Unknown({ description: 'the actions where the condition holds, in order' })),
  else: Type.Optional(Type.Unknown({ description: 'the actions elsewhere, in order' })),
})
const OrderBody = Type.Object({ ids: Type.Optional(Type.Unknown({ description: 'every rule id of the scope, in the new order' })) })
const PreviewBody = Type.Object({
  rules: Type.Optional(Type.Unknown({ description: "drafts standing in for the scope's saved rules, in order" })),
  ids: Type.Optional(Type.Unknown({ description: 'the products to show (at most 50)' })),
  filter: Type.Optional(Type.Unknown({ description: 'a product-read condition choosing the products to show' })),
  // Not an integer: readLimit (preview-input.ts) takes a number or digits only ("limit: … from 1 to 50"); coercion would take true, "" or " 5".
  limit: Type.Optional(Type.Unknown({ description: 'how many products to show: 1 to 50, default 10' })),
  // changed_only, summary: not NullableBoolean, whose coercion takes "true" and 1; readFlag (preview-input.ts) takes true or false only.
  changed_only: Type.Optional(Type.Unknown({ description: 'only products the rules change or exclude' })),
  summary: Type.Optional(Type.Unknown({ description: 'false: no whole-stage summary (default true)' })),
})
const SiteScope = Type.Object({ siteId: Type.String() })
const ChannelScope = Type.Object({ siteId: Type.String(), channelId: Type.String() })
const Rules = Envelope('Rules', RuleOut)
const Previews = Envelope('Previews', PreviewOut)
const tags = ['rules']

/** The scope of a request's path: a site, or one of its channels. */
function refOf(params: { siteId: string; channelId?: string }): RuleScopeRef {
  return params.channelId === undefined ? { siteSegment: params.siteId } : { siteSegment: params.siteId, channelId: params.channelId }
}

type App = Parameters<FastifyPluginAsyncTypebox<PlatformDeps>>[0]

/** The rule routes of one scope: `prefix` is the scope's path, `kind` names its operations (listSiteRules, listChannelRules…). */
function scopeRoutes(app: App, deps: PlatformDeps, prefix: string, kind: 'Site' | 'Channel'): void {
  const Params = kind === 'Site' ? SiteScope : ChannelScope
  const RuleParams = Type.Composite([Params, Type.Object({ ruleId: Type.String() })])
  const op = (verb: string) => `${verb}${kind}Rule${verb === 'list' || verb === 'reorder' || verb === 'preview' ? 's' : ''}`
  {
    const { db } = deps
    const base = (request: Parameters<typeof baseOf>[0]) => baseOf(request, deps)
    app.get(`${prefix}/rules`, { schema: { operationId: op('list'), tags, params: Params, response: { 200: Rules, ...errorResponses } } }, async (request) => {
      const { rules } = await listRules(db, accountOf(request), refOf(request.params))
      return { success: true as const, Rules: rules.map((rule) => ruleView(rule, base(request))) }
    })
    const create = {
      operationId: op('create'),
      tags,
      headers: IdempotencyHeaders,
      params: Params,
      body: RuleBody,
      response: { 201: Rules, ...writeErrorResponses },
    }
    app.post(`${prefix}/rules`, { schema: create }, async (request, reply) =>
      answerOnce(request, reply, deps, {
        run: () => createRule(db, accountOf(request), refOf(request.params), request.body),
        render: (rule) => ({ status: 201, body: { success: true as const, Rules: [ruleView(rule, base(request))] } }),
      }),
    )
    const reorder = { operationId: op('reorder'), tags, params: Params, body: OrderBody, response: { 200: Rules, ...writeErrorResponses } }
    app.put(`${prefix}/rules/order`, { schema: reorder }, async (request) => {
      const rules = await reorderRules(db, accountOf(request), refOf(request.params), request.body)
      return { success: true as const, Rules: rules.map((rule) => ruleView(rule, base(request))) }
    })
    const preview = {
      operationId: op('preview'),
      tags,
      params: Params,
      body: PreviewBody,
      response: { 200: Previews, ...writeErrorResponses, ...readBudgetResponses },
    }
    app.post(`${prefix}/rules/preview`, { schema: preview }, async (request) => {
      const budget = { timeoutMs: deps.config.PRODUCT_READ_TIMEOUT_MS, slots: deps.readSlots, limits: { feedMaxBytes: deps.config.FEED_MAX_BYTES } }
      const found = await previewRules(db, accountOf(request), refOf(request.params), request.body, budget)
      return { success: true as const, Previews: [found] }
    })
    app.get(
      `${prefix}/rules/:ruleId`,
      { schema: { operationId: op('get'), tags, params: RuleParams, response: { 200: Rules, ...errorResponses } } },
      async (request) => {
        const rule = await getRule(db, accountOf(request), refOf(request.params), request.params.ruleId)
        return { success: true as const, Rules: [ruleView(rule, base(request))] }
      },
    )
    const update = { operationId: op('update'), tags, params: RuleParams, body: RuleBody, response: { 200: Rules, ...writeErrorResponses } }
    app.put(`${prefix}/rules/:ruleId`, { schema: update }, async (request) => {
      const rule = await updateRule(db, accountOf(request), refOf(request.params), request.params.ruleId, request.body)
      return { success: true as const, Rules: [ruleView(rule, base(request))] }
    })
    const remove = { operationId: op('delete'), tags, params: RuleParams, response: { 200: SuccessBody, ...errorResponses } }
    app.delete(`${prefix}/rules/:ruleId`, { schema: remove }, async (request) => {
      await deleteRule(db, accountOf(request), refOf(request.params), request.params.ruleId)
      return { success: true as const }
    })
  }
}

export const ruleRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, deps) => {
  scopeRoutes(app, deps, '/sites/:siteId', 'Site')
  scopeRoutes(app, deps, '/sites/:siteId/channels/:channelId', 'Channel')
}
