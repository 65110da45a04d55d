import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { accountOf } from '../auth/caller.js'
import { SEVERITIES, channelChecks, channelDiagnostics, type ChannelChecks } from '../channels/channel-diagnostics.js'
import { MAX_QUOTED_VALUE } from '../templates/template-codes.js'
import { readinessOf } from '../exports/check-totals.js'
import { formatTimestamp, links } from './envelope.js'
import { baseOf, type PlatformDeps } from './deps.js'
import { OneOf, errorResponses } from './schemas.js'

// A channel's diagnostics: which products its last export left out or exported with
// warnings, and why, per check; and the counts. Account-scoped like every channel read: another
// account's channel is a 404.

const ChannelParams = Type.Object({ siteId: Type.String(), channelId: Type.String() })
const DiagnosticsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  offset: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 }),
  severity: Type.Optional(OneOf(SEVERITIES)),
  // The template's own codes and attributes: the domain (selectedCodes) names the template that lacks them.
  code: Type.Optional(Type.String({ maxLength: 200, description: "one of the template's codes" })),
  attribute: Type.Optional(Type.String({ maxLength: 200 })),
  id: Type.Optional(Type.String({ maxLength: 1000, description: 'one product id' })),
})
const DiagnosticOut = Type.Object({
  id: Type.String({ description: 'the product id' }),
  attribute: Type.String(),
  code: Type.String(),
  severity: OneOf(SEVERITIES),
  message: Type.String(),
  value: Type.String({ description: `the value checked, cut to ${MAX_QUOTED_VALUE} characters` }),
  hint: Type.String(),
})
const Meta = Type.Object({ total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() })
const CodeCount = Type.Object({ code: Type.String(), attribute: Type.String(), severity: Type.String(), count: Type.Integer(), message: Type.String() })
const SummaryOut = Type.Object({
  site_id: Type.String(),
  channel_id: Type.String(),
  template: Type.String(),
  validation_mode: Type.String(),
  exported_at: Type.Union([Type.String(), Type.Null()]),
  pid: Type.Union([Type.String(), Type.Null()]),
  products_checked: Type.Integer(),
  products_exported: Type.Integer(),
  products_left_out: Type.Integer(),
  products_exported_with_warnings: Type.Integer(),
  products_with_errors: Type.Integer(),
  products_with_warnings: Type.Integer(),
  readiness_score: Type.Union([Type.Number(), Type.Null()], { description: 'share of products without errors, 0 to 1; null before the first export' }),
  readiness_threshold: Type.Union([Type.Number(), Type.Null()]),
  by_severity: Type.Object({ error: Type.Integer(), warning: Type.Integer(), info: Type.Integer() }),
  by_code: Type.Array(CodeCount),
  links: Type.Array(Type.Record(Type.String(), Type.String())),
})

function summaryView(checks: ChannelChecks, base: string) {
  const totals = checks.totals
  const by_code = checks.codes
    .filter((c) => (totals?.codes[c.code] ?? 0) > 0)
    .map((c) => ({ code: c.code, attribute: c.attribute, severity: c.severity, count: totals?.codes[c.code] ?? 0, message: c.message }))
  const bySeverity = (severity: string) => by_code.filter((c) => c.severity === severity).reduce((sum, c) => sum + c.count, 0)
  const self = `/platform/v2/sites/${checks.siteId}/channels/${checks.channelId}`
  return {
    site_id: checks.siteId,
    channel_id: checks.channelId,
    template: checks.template,
    validation_mode: checks.validationMode,
    exported_at: checks.exportedAt ? formatTimestamp(checks.exportedAt) : null,
    pid: checks.pid,
    products_checked: totals?.checked ?? 0,
    products_exported: totals?.exported ?? 0,
    products_left_out: totals?.leftOut ?? 0,
    products_exported_with_warnings: totals?.exportedWithWarnings ?? 0,
    products_with_errors: totals?.withErrors ?? 0,
    products_with_warnings: totals?.withWarnings ?? 0,
    readiness_score: totals ? readinessOf(totals) : null,
    readiness_threshold: checks.readinessThreshold,
    by_severity: { error: bySeverity('error'), warning: bySeverity('warning'), info: bySeverity('info') },
    by_code,
    links: links(base, { self: `${self}/diagnostics/summary`, diagnostics: `${self}/diagnostics`, channel: self }),
  }
}

export const diagnosticsRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, deps) => {
  const { db } = deps
  const tags = ['channels']
  app.get(
    '/sites/:siteId/channels/:channelId/diagnostics',
    {
      schema: {
        operationId: 'listChannelDiagnostics',
        tags,
        params: ChannelParams,
        querystring: DiagnosticsQuery,
        response: { 200: Type.Object({ success: Type.Literal(true), Diagnostics: Type.Array(DiagnosticOut), meta: Meta }), ...errorResponses },
      },
    },
    async (request) => {
      const { siteId, channelId } = request.params
      const { entries, total } = await channelDiagnostics(db, accountOf(request), siteId, channelId, request.query)
      return {
        success: true as const,
        Diagnostics: entries.map(({ productId, check, value }) => ({
          id: productId,
          attribute: check.attribute,
          code: check.code,
          severity: check.severity,
          message: check.message,
          value,
          hint: check.hint,
        })),
        meta: { total, limit: request.query.limit, offset: request.query.offset },
      }
    },
  )
  app.get(
    '/sites/:siteId/channels/:channelId/diagnostics/summary',
    {
      schema: {
        operationId: 'getChannelDiagnosticsSummary',
        tags,
        params: ChannelParams,
        response: { 200: Type.Object({ success: Type.Literal(true), Summary: Type.Array(SummaryOut) }), ...errorResponses },
      },
    },
    async (request) => {
      const checks = await channelChecks(db, accountOf(request), request.params.siteId, request.params.channelId)
      return { success: true as const, Summary: [summaryView(checks, baseOf(request, deps))] }
    },
  )
}
