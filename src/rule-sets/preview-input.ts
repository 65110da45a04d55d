import type { DbHandle } from '../db/database.js'
import { BadRequestError } from '../errors.js'
import { checkText, hasUnstorableCharacter } from '../input/text-input.js'
import { MAX_PRODUCT_ID_BYTES } from '../catalog/row-rules.js'
import type { RuleInput } from '../rules/rule-input.js'
import type { RuleSpec } from '../rules/rule-types.js'
import { RULE_LIMITS } from '../rules/rule-values.js'
import { checkedRule, type RuleScopeOf } from './rule-sets.js'

// What a preview is asked (POST …/rules/preview): drafts standing in for the scope's saved rules,
// and which products to show: given ids, those a filter selects, or the first in id order; only
// those the rules change, when asked.

/** The most products a preview shows. */
export const PREVIEW_MAX_PRODUCTS = 50

export interface PreviewInput {
  rules?: unknown
  ids?: unknown
  filter?: unknown
  limit?: unknown
  changed_only?: unknown
  summary?: unknown
}

export interface PreviewRequest {
  /** The drafts, in order, or undefined: the saved rules. */
  drafts: RuleSpec[] | undefined
  ids: string[] | undefined
  filter: string
  limit: number
  /** Only products the rules change or exclude. */
  changedOnly: boolean
  /** Whether to read the whole stage for the summary (counts, matches, readiness). */
  summary: boolean
}

export async function readPreview(db: DbHandle, scope: RuleScopeOf, input: PreviewInput): Promise<PreviewRequest> {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new BadRequestError('body: an object is required ({"rules": [...], "limit": 10})')
  return {
    drafts: input.rules === undefined || input.rules === null ? undefined : await readDrafts(db, scope, input.rules),
    ids: input.ids === undefined || input.ids === null ? undefined : readIds(input.ids),
    filter: input.filter === undefined || input.filter === null ? '' : filterText(input.filter),
    limit: readLimit(input.limit),
    changedOnly: readFlag(input.changed_only, 'changed_only', false),
    summary: readFlag(input.summary, 'summary', true),
  }
}

/** Each draft checked as a save checks it; a mistake names the draft (`rules[2].then[0].value: …`). */
async function readDrafts(db: DbHandle, scope: RuleScopeOf, value: unknown): Promise<RuleSpec[]> {
  if (!Array.isArray(value)) throw new BadRequestError('rules: must be a list of rules (they stand in for the saved ones, in order)')
  if (value.length > RULE_LIMITS.rulesPerScope) throw new BadRequestError(`rules: at most ${RULE_LIMITS.rulesPerScope} rules`)
  const drafts: RuleSpec[] = []
  let actions = 0
  for (const [i, item] of value.entries()) {
    try {
      const rule = await checkedRule(db, scope, item as RuleInput)
      const id = (item as { id?: unknown } | null)?.id
      drafts.push({ ...rule, id: typeof id === 'string' || typeof id === 'number' ? String(id).slice(0, 40) : `draft-${i + 1}` })
      actions += rule.then.length + rule.else.length
      if (actions > RULE_LIMITS.actionsPerScope)
        throw new BadRequestError(`then, else: the drafts have more than ${RULE_LIMITS.actionsPerScope} actions together`)
    } catch (error) {
      throw error instanceof BadRequestError ? new BadRequestError(`rules[${i}].${error.message}`) : error
    }
  }
  return drafts
}

function readIds(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) throw new BadRequestError('ids: a non-empty list of product ids is required')
  if (value.length > PREVIEW_MAX_PRODUCTS) throw new BadRequestError(`ids: at most ${PREVIEW_MAX_PRODUCTS} products`)
  return value.map((id: unknown, i) => {
    if (typeof id !== 'string' || id === '') throw new BadRequestError(`ids[${i}]: must be a product id (a non-empty text)`)
    if (hasUnstorableCharacter(id) || Buffer.byteLength(id) > MAX_PRODUCT_ID_BYTES) throw new BadRequestError(`ids[${i}]: no product can have this id`)
    return id
  })
}

function filterText(value: unknown): string {
  if (typeof value !== 'string') throw new BadRequestError('filter: must be a text (a filter as product reads take one)')
  return checkText(value, 'filter', 10_000)
}

function readLimit(value: unknown): number {
  if (value === undefined || value === null) return 10
  const limit = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > PREVIEW_MAX_PRODUCTS) {
    throw new BadRequestError(`limit: must be a whole number from 1 to ${PREVIEW_MAX_PRODUCTS}`)
  }
  return limit
}

function readFlag(value: unknown, field: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'boolean') throw new BadRequestError(`${field}: must be true or false`)
  return value
}
