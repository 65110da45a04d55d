import type { Db, DbHandle } from '../db/database.js'
import type { RuleRow } from '../db/schema.js'
import { NotFoundError } from '../errors.js'
import { importStageOf } from '../exports/export-store.js'
import { intermediateColumns } from '../rules/intermediate-stage.js'
import { ruleSpecOf } from '../rules/rule-store.js'
import { listRules, reorderRules, type RuleScopeOf, type RuleScopeRef } from './rule-sets.js'

// What the console's rule pages need beyond the rule routes: a scope's rules with the
// columns its rules may read and write, and one rule moved a place up or down.

export interface RulesWithColumns {
  scope: RuleScopeOf
  rules: RuleRow[]
  /**
   * The columns the scope's rules see: for a site, the import stage's and those the site's rules
   * create (the intermediate stage's); for a channel, its mapping's (the intermediate stage's
   * without one) and those its own rules create.
   */
  columns: string[]
}

export async function rulesWithColumns(db: DbHandle, accountId: string, ref: RuleScopeRef): Promise<RulesWithColumns> {
  const { scope, rules } = await listRules(db, accountId, ref)
  const importColumns = (await importStageOf(db, scope.site.id))?.columns ?? []
  if (scope.channel === null) return { scope, rules, columns: intermediateColumns(importColumns, rules.map(ruleSpecOf)) }
  const siteRules = (await listRules(db, accountId, { siteSegment: scope.site.id })).rules.map(ruleSpecOf).filter((rule) => rule.enabled)
  const mapped = scope.channel.mapping.map((entry) => entry.column)
  const base = mapped.length > 0 ? mapped : intermediateColumns(importColumns, siteRules)
  return { scope, rules, columns: intermediateColumns(base, rules.map(ruleSpecOf)) }
}

/**
 * Moves a rule one place up (earlier) or down (later) through reorderRules: the scope's order with
 * the rule and its neighbour swapped. The first rule moved up, or the last down, stays.
 */
export async function moveRule(db: Db, accountId: string, ref: RuleScopeRef, ruleId: string, direction: 'up' | 'down'): Promise<RuleRow[]> {
  const { scope, rules } = await listRules(db, accountId, ref)
  const at = rules.findIndex((rule) => rule.id === ruleId)
  if (at < 0) {
    const where = scope.channel ? `channel ${scope.channel.id} of site ${scope.site.id}` : `site ${scope.site.id}`
    throw new NotFoundError(`Rule ${ruleId.slice(0, 40)} of ${where} not found`)
  }
  const to = direction === 'up' ? at - 1 : at + 1
  if (to < 0 || to >= rules.length) return rules
  const ids = rules.map((rule) => rule.id)
  ;[ids[at], ids[to]] = [ids[to] ?? '', ids[at] ?? '']
  return reorderRules(db, accountId, ref, { ids })
}
