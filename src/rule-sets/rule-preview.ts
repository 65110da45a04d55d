import { SlotsFullError, type ConnectionSlots } from '../db/connection-slots.js'
import { QUERY_CANCELED, type Db } from '../db/database.js'
import { withReadSnapshot } from '../db/transaction.js'
import { ConflictError, ReadTimeoutError, TooManyReadsError } from '../errors.js'
import type { ExportLimits } from '../exports/export-plan.js'
import { rulesOfScope } from '../rules/rule-store.js'
import { RunFailure } from '../sites/run-failure.js'
import { previewChannel, type ChannelPreview } from './channel-preview.js'
import { readPreview, type PreviewInput } from './preview-input.js'
import { findRuleScope, type RuleScopeRef } from './rule-sets.js'
import { previewSite, type SitePreview } from './site-preview.js'

// POST …/rules/preview: what a scope's rules (the drafts sent, or the saved ones) do to sample
// products and to the whole stage, read in one read-only snapshot: a preview writes nothing, and a
// product read's budget bounds it (PRODUCT_READ_TIMEOUT_MS a statement, READS_PER_ACCOUNT at once).

export interface PreviewBudget {
  timeoutMs: number
  slots: ConnectionSlots
  limits: ExportLimits
}

export type RulePreview = ({ scope: 'site' } & SitePreview) | ({ scope: 'channel' } & ChannelPreview)

export async function previewRules(db: Db, accountId: string, ref: RuleScopeRef, input: PreviewInput, budget: PreviewBudget): Promise<RulePreview> {
  const scope = await findRuleScope(db, accountId, ref)
  const request = await readPreview(db, scope, input)
  const { site, channel } = scope
  const rules = request.drafts ?? (await rulesOfScope(db, accountId, { siteId: site.id, channelId: channel?.id ?? null }))
  const signal = AbortSignal.timeout(budget.timeoutMs)
  try {
    return await budget.slots.run(accountId, signal, () =>
      withReadSnapshot(db, budget.timeoutMs, async (handle): Promise<RulePreview> => {
        if (!channel) return { scope: 'site', ...(await previewSite(handle, site, rules, request)) }
        return { scope: 'channel', ...(await previewChannel(db, handle, { site, channel, rules, request, limits: budget.limits })) }
      }),
    )
  } catch (error) {
    if (error instanceof SlotsFullError) throw new TooManyReadsError(error.inFlight)
    if ((error as { code?: unknown }).code === QUERY_CANCELED)
      throw new ReadTimeoutError(budget.timeoutMs, 'ask without the whole-stage summary ("summary": false) or for fewer products')
    // The channel's own settings stop its export (a filter or mapping it cannot use): the preview says so.
    if (error instanceof RunFailure) throw new ConflictError(`The channel cannot be exported as it is set up: ${error.message}`)
    throw error
  }
}
