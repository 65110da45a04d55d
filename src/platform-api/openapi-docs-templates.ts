import type { OperationDocs } from '../http/openapi.js'

// The OpenAPI docs of the channel templates and a channel's diagnostics (by operationId).

const BASE = 'http://127.0.0.1:8080/platform/v2'
const specification = {
  name: 'Google Merchant Center product data specification',
  version: 'read 2026-11-25',
  url: 'https://support.google.com/merchants/answer/7052112',
}
const summaryOfGoogle = {
  name: 'google_shopping',
  title: 'Google Shopping (Merchant Center)',
  specification,
  default_format: 'xml',
  formats: ['xml', 'tsv'],
  attribute_count: 51,
  links: [{ self: `${BASE}/export_templates/google_shopping` }],
}
const titleCheck = {
  code: 'title_too_long',
  attribute: 'title',
  severity: 'error',
  message: 'title has more than 150 characters',
  hint: 'Shorten title to at most 150 characters.',
}
const channelPath = `${BASE}/sites/1/channels/2`

export const templateDocs: Record<string, OperationDocs> = {
  listExportTemplates: {
    summary: 'List the channel templates',
    description:
      "The built-in templates a channel's `export_name` picks: `generic` (nothing checked, the default), `google_shopping`, " +
      '`meta_catalog` and `idealo`, each with the public specification and version it follows. The same for every account.',
    responses: { 200: { ok: { value: { success: true, ExportTemplates: [summaryOfGoogle] } } } },
  },
  getExportTemplate: {
    summary: 'Read a channel template',
    description:
      'One template with its attributes (`required`, `recommended`, `optional`, a description, the value rules) and every check ' +
      'it reports, with its code, attribute, severity, message and hint. An unknown name is a 404.',
    responses: {
      200: {
        ok: {
          value: {
            success: true,
            ExportTemplates: [
              {
                ...summaryOfGoogle,
                attributes: [{ name: 'title', requirement: 'required', description: 'The name of the product.', rules: [{ kind: 'max_length', max: 150 }] }],
                group_rules: [],
                checks: [titleCheck],
              },
            ],
          },
        },
      },
    },
  },
  listChannelDiagnostics: {
    summary: "List the failed checks of a channel's last export",
    description:
      'One entry per product and failed check, in product id order: the attribute, the code, its severity (`error`: the ' +
      'product is left out of the feed in mode `exclude`; `warning`; `info`: a value normalised), the message, the value ' +
      'checked (cut to 200 characters) and a hint. Filters: `severity`, `code`, `attribute`, product `id`; a filter the ' +
      "channel's template cannot have is a 400 naming it. `meta.total` is exact. Empty before the channel's first export.",
    responses: {
      200: {
        ok: {
          value: {
            success: true,
            Diagnostics: [{ id: 'SKU1', ...titleCheck, value: 'Organic cotton shirt, slim fit, in twelve colours …' }],
            meta: { total: 1, limit: 100, offset: 0 },
          },
        },
      },
    },
  },
  getChannelDiagnosticsSummary: {
    summary: "Read the counts of a channel's checks",
    description:
      'Products checked, exported, left out and exported with warnings, products with errors and with warnings, the counts per ' +
      'code and per severity, and the readiness score: the share of products without errors (null before the first export).',
    responses: {
      200: {
        ok: {
          value: {
            success: true,
            Summary: [
              {
                site_id: '1',
                channel_id: '2',
                template: 'google_shopping',
                validation_mode: 'exclude',
                exported_at: '2026-11-21 19:41:12',
                pid: '0f6b1c3e-2a4d-4e5f-9a7b-8c9d0e1f2a3b',
                products_checked: 18370,
                products_exported: 18342,
                products_left_out: 28,
                products_exported_with_warnings: 1210,
                products_with_errors: 28,
                products_with_warnings: 1210,
                readiness_score: 0.9985,
                readiness_threshold: 0.99,
                by_severity: { error: 28, warning: 1210, info: 0 },
                by_code: [{ code: 'title_too_long', attribute: 'title', severity: 'error', count: 28, message: titleCheck.message }],
                links: [{ self: `${channelPath}/diagnostics/summary` }, { diagnostics: `${channelPath}/diagnostics` }, { channel: channelPath }],
              },
            ],
          },
        },
      },
    },
  },
}
