import { sql } from 'kysely'
import { getChannel } from '../channels/channels.js'
import type { Db, DbHandle } from '../db/database.js'
import { isId } from '../db/ids.js'
import type { Channel, RuleRow, Site } from '../db/schema.js'
import { inTransaction } from '../db/transaction.js'
import { BadRequestError, NotFoundError } from '../errors.js'
import { xmlNameProblem } from '../feeds/feed-xml.js'
import { getSite } from '../sites/sites.js'
import { readRule, rulePatterns, type RuleInput } from '../rules/rule-input.js'
import { ruleSpecOf, scopeRows } from '../rules/rule-store.js'
import type { RuleSpec } from '../rules/rule-types.js'
import { RULE_LIMITS } from '../rules/rule-values.js'
import { changesBetween } from '../activity/activity-changes.js'
import { recordActivity } from '../activity/activity-store.js'
import { settleRequestClaim } from '../activity/request-scope.js'

// A site's rules and each channel's: list, read, create, replace, delete, reorder. The
// scope is found for the caller's account first (another account's site or channel is a 404), and
// every write of a scope takes its site's row lock, so that parallel writers keep positions 1…n
// and the bound on rules per scope.

/** Where a request's rules are: a site (by id or tag) and, for a channel's rules, its id. */
export interface RuleScopeRef {
  siteSegment: string
  channelId?: string
}

export interface RuleScopeOf {
  site: Site
  channel: Channel | null
}

export async function findRuleScope(db: DbHandle, accountId: string, ref: RuleScopeRef): Promise<RuleScopeOf> {
  if (ref.channelId === undefined) return { site: await getSite(db, accountId, ref.siteSegment), channel: null }
  const { channel } = await getChannel(db, accountId, ref.siteSegment, ref.channelId)
  return { site: await getSite(db, accountId, channel.site_id), channel }
}

const scopeOf = ({ site, channel }: RuleScopeOf) => ({ siteId: site.id, channelId: channel?.id ?? null })

export async function listRules(db: DbHandle, accountId: string, ref: RuleScopeRef): Promise<{ scope: RuleScopeOf; rules: RuleRow[] }> {
  const scope = await findRuleScope(db, accountId, ref)
  return { scope, rules: await scopeRows(db, accountId, scopeOf(scope)).execute() }
}

export async function getRule(db: DbHandle, accountId: string, ref: RuleScopeRef, ruleId: string): Promise<RuleRow> {
  const scope = await findRuleScope(db, accountId, ref)
  return ruleOfScope(db, accountId, scope, ruleId)
}

async function ruleOfScope(db: DbHandle, accountId: string, scope: RuleScopeOf, ruleId: string): Promise<RuleRow> {
  const found = isId(ruleId) ? await scopeRows(db, accountId, scopeOf(scope)).where('id', '=', ruleId).executeTakeFirst() : undefined
  const where = scope.channel ? `channel ${scope.channel.id} of site ${scope.site.id}` : `site ${scope.site.id}`
  if (!found) throw new NotFoundError(`Rule ${ruleId} of ${where} not found`)
  return found
}

/** A scope's rules have at most RULE_LIMITS.actionsPerScope actions together: `rule` added, or replacing `replacing`. */
async function requireActionRoom(trx: DbHandle, accountId: string, scope: RuleScopeOf, rule: Omit<RuleSpec, 'id'>, replacing: string | null): Promise<void> {
  let others = scopeRows(trx, accountId, scopeOf(scope))
  if (replacing !== null) others = others.where('id', '<>', replacing)
  const { rows } = await sql<{ n: string | null }>`
    SELECT sum(jsonb_array_length(r.then_actions) + jsonb_array_length(r.else_actions)) AS n FROM (${others}) AS r`.execute(trx)
  const total = Number(rows[0]?.n ?? 0) + rule.then.length + rule.else.length
  if (total > RULE_LIMITS.actionsPerScope) {
    throw new BadRequestError(
      `then, else: a ${scope.channel ? 'channel' : 'site'}'s rules have at most ${RULE_LIMITS.actionsPerScope} actions together; ` +
        `with this rule they would have ${total}`,
    )
  }
}

/** Serialises the writes of a site's rules (its own and its channels'). */
async function lockScope(trx: DbHandle, scope: RuleScopeOf): Promise<void> {
  await trx.selectFrom('site').select('id').where('id', '=', scope.site.id).forNoKeyUpdate().executeTakeFirst()
}

export async function createRule(db: Db, accountId: string, ref: RuleScopeRef, input: RuleInput): Promise<RuleRow> {
  const scope = await findRuleScope(db, accountId, ref)
  const rule = await checkedRule(db, scope, input)
  return inTransaction(db, async (tx) => {
    const trx = tx.db
    await lockScope(trx, scope)
    const { rows } = await sql<{
      n: string
      last: number | null
    }>`SELECT count(*) AS n, max(position) AS last FROM (${scopeRows(trx, accountId, scopeOf(scope))}) AS r`.execute(trx)
    const have = Number(rows[0]?.n ?? 0)
    if (have >= RULE_LIMITS.rulesPerScope) {
      throw new BadRequestError(
        `A ${scope.channel ? 'channel' : 'site'} can have at most ${RULE_LIMITS.rulesPerScope} rules; it has ${have}. Delete some before adding more`,
      )
    }
    await requireActionRoom(trx, accountId, scope, rule, null)
    const created = await trx
      .insertInto('rule')
      .values({ account_id: accountId, site_id: scope.site.id, channel_id: scope.channel?.id ?? null, position: (rows[0]?.last ?? 0) + 1, ...stored(rule) })
      .returningAll()
      .executeTakeFirstOrThrow()
    await recordRuleChange(trx, 'rule.created', null, created)
    await settleRequestClaim(tx, created)
    return created
  })
}

/** A rule's creation, change or deletion in the activity log, with the scope it belongs to. */
async function recordRuleChange(trx: DbHandle, action: string, before: RuleRow | null, after: RuleRow | null): Promise<void> {
  const rule = (after ?? before)!
  const changes = changesBetween(before, after, { omit: ['site_id', 'channel_id'] })
  if (before && after && Object.keys(changes).length === 0) return
  const target = { type: 'rule', id: rule.id, siteId: rule.site_id }
  await recordActivity(trx, { accountId: rule.account_id, action, target, changes: { channel_id: [null, rule.channel_id], ...changes } })
}

/** Replaces a rule's fields: those the body names; the others keep their values, and the rule its position. */
export async function updateRule(db: Db, accountId: string, ref: RuleScopeRef, ruleId: string, input: RuleInput): Promise<RuleRow> {
  const scope = await findRuleScope(db, accountId, ref)
  const current = ruleSpecOf(await ruleOfScope(db, accountId, scope, ruleId))
  const given = typeof input === 'object' && input !== null && !Array.isArray(input) ? input : undefined
  const rule = await checkedRule(db, scope, given ? { ...current, ...definedFields(given) } : input)
  return inTransaction(db, async ({ db: trx }) => {
    await lockScope(trx, scope)
    const before = await ruleOfScope(trx, accountId, scope, current.id)
    await requireActionRoom(trx, accountId, scope, rule, current.id)
    const updated = await trx
      .updateTable('rule')
      .set({ ...stored(rule), updated_at: new Date() })
      .where('account_id', '=', accountId)
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirst()
    if (!updated) throw new NotFoundError(`Rule ${ruleId} not found`)
    await recordRuleChange(trx, 'rule.updated', before, updated)
    return updated
  })
}

export async function deleteRule(db: Db, accountId: string, ref: RuleScopeRef, ruleId: string): Promise<void> {
  const scope = await findRuleScope(db, accountId, ref)
  await inTransaction(db, async ({ db: trx }) => {
    await lockScope(trx, scope)
    const rule = await ruleOfScope(trx, accountId, scope, ruleId)
    await trx.deleteFrom('rule').where('account_id', '=', accountId).where('id', '=', rule.id).execute()
    // Positions stay 1…n: the rules after it move up one.
    await sql`UPDATE rule r SET position = r.position - 1 FROM (${scopeRows(trx, accountId, scopeOf(scope))}) AS s
      WHERE r.id = s.id AND r.position > ${rule.position}`.execute(trx)
    await recordRuleChange(trx, 'rule.deleted', rule, null)
  })
}

/** The scope's rules in the order `input.ids` gives: every rule of the scope exactly once, or nothing changes. */
export async function reorderRules(db: Db, accountId: string, ref: RuleScopeRef, input: unknown): Promise<RuleRow[]> {
  const scope = await findRuleScope(db, accountId, ref)
  const ids = orderIds(input)
  return inTransaction(db, async ({ db: trx }) => {
    await lockScope(trx, scope)
    const current = await scopeRows(trx, accountId, scopeOf(scope)).execute()
    const known = new Set(current.map((rule) => rule.id))
    const unknown = ids.filter((id) => !known.has(id))
    if (unknown.length > 0)
      throw new BadRequestError(
        `ids: ${unknown.slice(0, 10).join(', ')} ${unknown.length === 1 ? 'is no rule' : 'are no rules'} of this ${scope.channel ? 'channel' : 'site'}`,
      )
    const missing = current.filter((rule) => !ids.includes(rule.id)).map((rule) => rule.id)
    if (missing.length > 0) throw new BadRequestError(`ids: every rule of the scope is listed once; missing ${missing.slice(0, 10).join(', ')}`)
    await sql`UPDATE rule r SET position = o.position, updated_at = now()
      FROM unnest(${ids}::bigint[]) WITH ORDINALITY AS o(id, position)
      WHERE r.account_id = ${accountId} AND r.id = o.id AND r.position <> o.position`.execute(trx)
    const order = current.map((rule) => rule.id)
    if (order.join() !== ids.join()) {
      const target = scope.channel
        ? { type: 'channel', id: scope.channel.id, siteId: scope.site.id }
        : { type: 'site', id: scope.site.id, siteId: scope.site.id }
      await recordActivity(trx, { accountId, action: 'rule.reordered', target, changes: { order: [order, ids] } })
    }
    return scopeRows(trx, accountId, scopeOf(scope)).execute()
  })
}

function orderIds(input: unknown): string[] {
  const list: unknown = Array.isArray(input) ? input : typeof input === 'object' && input !== null ? (input as { ids?: unknown }).ids : undefined
  if (!Array.isArray(list)) throw new BadRequestError('ids: the list of every rule id in the new order is required ({"ids": ["12", "7", …]})')
  if (list.length > RULE_LIMITS.rulesPerScope) throw new BadRequestError(`ids: a scope has at most ${RULE_LIMITS.rulesPerScope} rules`)
  const ids = list.map((id: unknown, i) => {
    const text = typeof id === 'number' && Number.isSafeInteger(id) ? String(id) : id
    if (typeof text !== 'string' || !isId(text)) throw new BadRequestError(`ids[${i}]: must be a rule id`)
    return text
  })
  const twice = ids.find((id, i) => ids.indexOf(id) !== i)
  if (twice !== undefined) throw new BadRequestError(`ids: rule ${twice} is listed twice`)
  return ids
}

/** The body's fields that say something (undefined means "keep"): a PUT of `{"enabled": false}` only disables. */
function definedFields(input: RuleInput): RuleInput {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as RuleInput
}

/**
 * A rule from a client's body, checked for its scope: its fields (rule-input.ts), that each of its
 * patterns compiles in Postgres, which runs them, and, for a channel writing XML, that its attribute
 * can be an element of the feed.
 */
export async function checkedRule(db: DbHandle, scope: RuleScopeOf, input: RuleInput): Promise<Omit<RuleSpec, 'id'>> {
  const rule = readRule(input)
  for (const { field: at, pattern, caseSensitive } of rulePatterns(rule)) {
    try {
      await sql`SELECT '' ${sql.raw(caseSensitive ? '~' : '~*')} ${pattern}`.execute(db)
    } catch (error) {
      if ((error as { code?: unknown }).code !== '2201B') throw error
      throw new BadRequestError(`${at}: the pattern does not compile: ${(error as Error).message}`)
    }
  }
  if (rule.attribute !== null) await checkXmlName(db, scope, rule.attribute)
  return rule
}

/**
 * A channel writing XML takes only XML names as columns: a channel rule's attribute becomes one of
 * its channel's columns, a site rule's one of every XML channel without a mapping (whose columns are
 * the intermediate stage's). Refused when saved, so that no export fails on it later.
 */
async function checkXmlName(db: DbHandle, scope: RuleScopeOf, attribute: string): Promise<void> {
  const problem = xmlNameProblem(attribute)
  if (!problem) return
  if (scope.channel) {
    if (scope.channel.format === 'xml') throw new BadRequestError(`attribute: "${attribute}" cannot be an element of this channel's XML feed: ${problem}`)
    return
  }
  const xml = await db
    .selectFrom('channel')
    .select(['id', 'name'])
    .where('account_id', '=', scope.site.account_id)
    .where('site_id', '=', scope.site.id)
    .where('format', '=', 'xml')
    .where(sql<boolean>`jsonb_array_length(mapping) = 0`)
    .orderBy('id')
    .executeTakeFirst()
  if (xml) {
    throw new BadRequestError(
      `attribute: "${attribute}" cannot be an element of the XML feed of channel ${xml.id} (${xml.name}), whose columns are the intermediate stage's ` +
        `(it has no mapping): ${problem}`,
    )
  }
}

function stored(rule: Omit<RuleSpec, 'id'>) {
  return {
    enabled: rule.enabled,
    description: rule.description,
    attribute: rule.attribute,
    condition: rule.if === null ? null : JSON.stringify(rule.if),
    then_actions: JSON.stringify(rule.then),
    else_actions: JSON.stringify(rule.else),
  }
}
