import { counted } from '../input/text-input.js'
import type { Channel, CheckTotals } from '../db/schema.js'
import { SiteErrorCode } from '../sites/run-failure.js'
import type { SiteErrorReporter } from '../sites/site-errors.js'
import { GENERIC_TEMPLATE, templateNamed } from '../templates/template-catalog.js'
import { checkCodes } from '../templates/template-codes.js'
import type { ChecksData, ReadinessData } from '../webhooks/payloads.js'
import { readinessOf } from './check-totals.js'

// What an export tells about its checks besides the diagnostics: the counts in export.finished,
// channel.readiness_changed when the score crosses the channel's threshold, and one site error per
// failing code (never one per product: a catalog of 100,000 bad rows is one line per reason).

export function checksData(channel: Channel, totals: CheckTotals): ChecksData {
  return {
    template: channel.template,
    products_checked: totals.checked,
    products_exported: totals.exported,
    products_left_out: totals.leftOut,
    products_exported_with_warnings: totals.exportedWithWarnings,
    products_with_errors: totals.withErrors,
    products_with_warnings: totals.withWarnings,
    readiness_score: readinessOf(totals),
  }
}

/**
 * The crossing of the channel's readiness threshold by this export, if it crossed it. Before a
 * channel's first checked export its score counts as above: a first export below fires.
 */
export function readinessCrossing(
  channel: Channel,
  totals: CheckTotals,
  previous: CheckTotals | undefined,
): Omit<ReadinessData, 'pid' | 'site_id' | 'channel_id' | 'links'> | undefined {
  if (channel.readiness_threshold === null) return undefined
  const threshold = Number(channel.readiness_threshold)
  const score = readinessOf(totals)
  const before = previous === undefined ? null : readinessOf(previous)
  const above = (value: number | null) => value === null || value >= threshold
  if (above(score) === above(before)) return undefined
  return {
    template: channel.template,
    readiness_score: score,
    previous_readiness_score: before,
    readiness_threshold: threshold,
    direction: above(score) ? 'above' : 'below',
  }
}

/** One site error (a Warning) per code of severity error or warning that products of the channel fail. */
export async function reportFailedChecks(report: SiteErrorReporter, channel: Channel, totals: CheckTotals): Promise<void> {
  const template = templateNamed(channel.template) ?? GENERIC_TEMPLATE
  for (const code of checkCodes(template)) {
    const products = totals.codes[code.code] ?? 0
    if (products === 0 || code.severity === 'info') continue
    // A product with a warning may be left out for an error of its own: a warning's count says no
    // more than that the products have it (a run once said 3 were exported when the feed held none).
    const what = code.severity === 'warning' ? 'with this warning' : channel.validation_mode === 'exclude' ? 'left out of the feed' : 'exported with this error'
    await report(
      code.severity === 'error' ? SiteErrorCode.productsFailRequiredRule : SiteErrorCode.productsFailRecommendedRule,
      `Channel ${channel.id}: ${counted(products, 'product')} ${what}: ${code.message} (${code.code})`,
      { channel_id: channel.id, code: code.code, attribute: code.attribute, severity: code.severity, products },
    )
  }
}
