import type { DbHandle } from '../db/database.js'
import type { RuleRow } from '../db/schema.js'
import type { Action, Group, RuleScope, RuleSpec } from './rule-types.js'

// The rules of a scope as stored (table rule): a site's (channel_id null) or a channel's, in
// position order. Callers have found the scope's site (and channel) for the account already.

export function ruleSpecOf(row: RuleRow): RuleSpec {
  return {
    id: row.id,
    enabled: row.enabled,
    description: row.description,
    attribute: row.attribute,
    if: (row.condition ?? null) as Group | null,
    then: row.then_actions as Action[],
    else: row.else_actions as Action[],
  }
}

export function scopeRows(db: DbHandle, accountId: string, scope: RuleScope) {
  let query = db.selectFrom('rule').selectAll().where('account_id', '=', accountId).where('site_id', '=', scope.siteId)
  query = scope.channelId === null ? query.where('channel_id', 'is', null) : query.where('channel_id', '=', scope.channelId)
  return query.orderBy('position').orderBy('id')
}

/** The scope's rules, enabled or not, in order. */
export async function rulesOfScope(db: DbHandle, accountId: string, scope: RuleScope): Promise<RuleSpec[]> {
  return (await scopeRows(db, accountId, scope).execute()).map(ruleSpecOf)
}

/** Copies one scope's rules to another (a site copy): same order, fields and enabled state. */
export async function copyRules(trx: DbHandle, accountId: string, from: RuleScope, to: RuleScope): Promise<void> {
  const rules = await scopeRows(trx, accountId, from).execute()
  if (rules.length === 0) return
  await trx
    .insertInto('rule')
    .values(
      rules.map((rule) => ({
        account_id: accountId,
        site_id: to.siteId,
        channel_id: to.channelId,
        position: rule.position,
        enabled: rule.enabled,
        description: rule.description,
        attribute: rule.attribute,
        condition: rule.condition === null ? null : JSON.stringify(rule.condition),
        then_actions: JSON.stringify(rule.then_actions),
        else_actions: JSON.stringify(rule.else_actions),
      })),
    )
    .execute()
}
