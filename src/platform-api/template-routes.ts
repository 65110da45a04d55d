import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { NotFoundError } from '../errors.js'
import { SEVERITIES } from '../channels/channel-diagnostics.js'
import { TEMPLATES, templateNamed } from '../templates/template-catalog.js'
import { checkCodes } from '../templates/template-codes.js'
import type { ChannelTemplate, ValueRule } from '../templates/template-types.js'
import { links } from './envelope.js'
import { baseOf, type PlatformDeps } from './deps.js'
import { Links, OneOf, errorResponses } from './schemas.js'

// The built-in channel templates (docs/design.md 11): what a channel's export_name can pick, and
// what each checks. The same for every account: templates are the product's, not a tenant's.

const Rule = Type.Record(Type.String(), Type.Unknown(), { description: 'a value rule: {"kind":"max_length","max":150}, {"kind":"one_of","values":[…]}, …' })
const AttributeOut = Type.Object({
  name: Type.String(),
  requirement: Type.String({ enum: ['required', 'recommended', 'optional'] }),
  description: Type.String(),
  rules: Type.Array(Rule),
})
const CheckOut = Type.Object({
  code: Type.String(),
  attribute: Type.String(),
  severity: OneOf(SEVERITIES),
  message: Type.String(),
  hint: Type.String(),
})
const TemplateSummary = Type.Object({
  name: Type.String({ description: 'what a channel sets as export_name to use it' }),
  title: Type.String(),
  specification: Type.Object({ name: Type.String(), version: Type.String(), url: Type.String() }),
  default_format: Type.String(),
  formats: Type.Array(Type.String()),
  attribute_count: Type.Integer(),
  links: Links,
})
const TemplateOut = Type.Intersect([
  TemplateSummary,
  Type.Object({
    attributes: Type.Array(AttributeOut),
    group_rules: Type.Array(CheckOut),
    checks: Type.Array(CheckOut, { description: 'every code the template reports, in its order' }),
  }),
])

function summaryView(template: ChannelTemplate, base: string) {
  return {
    name: template.name,
    title: template.title,
    specification: template.specification,
    default_format: template.defaultFormat,
    formats: [...template.formats],
    attribute_count: template.attributes.length,
    links: links(base, { self: `/platform/v2/export_templates/${template.name}` }),
  }
}

function templateView(template: ChannelTemplate, base: string) {
  const checks = checkCodes(template).map(({ code, attribute, severity, message, hint }) => ({ code, attribute, severity, message, hint }))
  return {
    ...summaryView(template, base),
    attributes: template.attributes.map((a) => ({
      name: a.name,
      requirement: a.requirement,
      description: a.description,
      rules: (a.rules ?? []).map((rule: ValueRule): Record<string, unknown> => ({ ...rule })),
    })),
    group_rules: checks.filter((check) => (template.groupRules ?? []).some((rule) => rule.code === check.code)),
    checks,
  }
}

export const templateRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, deps) => {
  const tags = ['channels']
  app.get(
    '/export_templates',
    {
      schema: {
        operationId: 'listExportTemplates',
        tags,
        response: { 200: Type.Object({ success: Type.Literal(true), ExportTemplates: Type.Array(TemplateSummary) }), ...errorResponses },
      },
    },
    async (request) => ({ success: true as const, ExportTemplates: TEMPLATES.map((template) => summaryView(template, baseOf(request, deps))) }),
  )
  app.get(
    '/export_templates/:name',
    {
      schema: {
        operationId: 'getExportTemplate',
        tags,
        params: Type.Object({ name: Type.String() }),
        response: { 200: Type.Object({ success: Type.Literal(true), ExportTemplates: Type.Array(TemplateOut) }), ...errorResponses },
      },
    },
    async (request) => {
      const template = templateNamed(request.params.name)
      if (!template)
        throw new NotFoundError(`No export template ${JSON.stringify(request.params.name.slice(0, 100))}; GET /platform/v2/export_templates lists them`)
      return { success: true as const, ExportTemplates: [templateView(template, baseOf(request, deps))] }
    },
  )
}
