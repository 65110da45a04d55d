import type { ActionName } from '../rules/rule-types.js'
import { RULE_LIMITS } from '../rules/rule-values.js'

// The rule editor's form as the console reads it back: a rule's fields as texts, its
// conditions and actions as rows, so that a page sent back with a mistake shows exactly what the
// person typed. The same names read a prefill from a query (the diagnostics' "Fix with a rule").
//
// Field names: attribute, description, enabled, match (all | any); per condition row n
// c<n>_attribute, c<n>_operator, c<n>_value, c<n>_case; per action row then<n>_… and else<n>_…:
// _action and the parameters below; json (the advanced text).

/** The parameters an action row may show; each action uses those of ACTION_PARAMS. */
export const PARAM_KEYS = [
  'value',
  'from',
  'parts',
  'find',
  'pattern',
  'replacement',
  'entries',
  'default',
  'separator',
  'take_from',
  'count',
  'join',
  'to',
  'decimals',
  'mode',
  'max',
  'suffix',
  'case_sensitive',
] as const

export type ParamKey = (typeof PARAM_KEYS)[number]

export const ACTION_PARAMS: Record<ActionName, readonly ParamKey[]> = {
  set: ['value'],
  copy: ['from'],
  append: ['value', 'separator'],
  prepend: ['value', 'separator'],
  concat: ['parts', 'separator'],
  replace: ['find', 'replacement', 'case_sensitive'],
  map: ['entries', 'default', 'case_sensitive'],
  regex_replace: ['pattern', 'replacement', 'case_sensitive'],
  split_take: ['separator', 'take_from', 'count', 'join'],
  case: ['to'],
  trim: [],
  strip_html: [],
  round: ['decimals', 'mode'],
  truncate: ['max', 'suffix'],
  default_if_empty: ['value'],
  exclude: [],
}

/** The parameters of an action by its name; none for a name that is no action. */
export function paramsOf(action: string): readonly ParamKey[] {
  return Object.hasOwn(ACTION_PARAMS, action) ? ACTION_PARAMS[action as ActionName] : []
}

export interface ConditionRow {
  attribute: string
  operator: string
  /** The value; for in and not_in one value per line. */
  value: string
  caseSensitive: boolean
}

export interface ActionRow {
  action: string
  /** Texts as typed; case_sensitive is '1' when ticked. */
  params: Partial<Record<ParamKey, string>>
}

export interface RuleForm {
  attribute: string
  description: string
  enabled: boolean
  /** `all` or `any`; anything else as sent, for ruleInputOf to refuse by name. */
  match: string
  conditions: ConditionRow[]
  then: ActionRow[]
  else: ActionRow[]
  /** The advanced JSON text, as sent. */
  json: string
}

/** The longest text a field keeps (the rule's own limits say more: a longer one is refused with its message). */
const FIELD_CHARS = 4000
/**
 * Map entries, values of in and not_in, concat parts, the JSON text: read whole (the form's body
 * limit bounds them), so that a list the rule's limits allow is never cut short unseen.
 */
const LIST_CHARS = Infinity
const LIST_PARAMS: readonly ParamKey[] = ['entries', 'parts']

export function newActionRow(action = 'set'): ActionRow {
  return { action, params: action === 'concat' ? { separator: ' ' } : {} }
}

export function newConditionRow(): ConditionRow {
  return { attribute: '', operator: 'equals', value: '', caseSensitive: false }
}

/** A new rule: one empty condition row (ignored while empty) and one action. */
export function emptyRuleForm(): RuleForm {
  return { attribute: '', description: '', enabled: true, match: 'all', conditions: [newConditionRow()], then: [newActionRow()], else: [], json: '' }
}

/** A form or query value as one text: the first of repeated ones, cut to `max`. */
export function fieldText(value: unknown, max = FIELD_CHARS): string {
  const first = Array.isArray(value) ? (value as unknown[])[0] : value
  return typeof first === 'string' ? first.slice(0, max) : ''
}

/** The row numbers named by fields `<prefix><n>_…`, in order, at most `max`. */
function rowNumbers(body: Record<string, unknown>, prefix: string, max: number): number[] {
  const pattern = new RegExp(`^${prefix}(\\d{1,3})_`)
  const found = new Set<number>()
  for (const key of Object.keys(body)) {
    const n = pattern.exec(key)?.[1]
    if (n !== undefined) found.add(Number(n))
  }
  return [...found].sort((a, b) => a - b).slice(0, max)
}

function actionRows(body: Record<string, unknown>, side: 'then' | 'else'): ActionRow[] {
  return rowNumbers(body, side, RULE_LIMITS.actionsPerRule).map((n) => {
    const params: Partial<Record<ParamKey, string>> = {}
    for (const key of PARAM_KEYS) {
      const value = fieldText(body[`${side}${n}_${key}`], LIST_PARAMS.includes(key) ? LIST_CHARS : FIELD_CHARS)
      if (value !== '') params[key] = value
    }
    return { action: fieldText(body[`${side}${n}_action`], 40) || 'set', params }
  })
}

/**
 * The form as sent (a POST's body), or a prefill (a GET's query): `submitted` tells an unticked
 * "enabled" (a sent form) from one not given (a prefill, enabled unless it says enabled=0).
 */
export function readRuleForm(body: Record<string, unknown>, submitted: boolean): RuleForm {
  const enabled = fieldText(body.enabled, 10)
  const conditions = rowNumbers(body, 'c', RULE_LIMITS.groupItems).map((n) => ({
    attribute: fieldText(body[`c${n}_attribute`]),
    operator: fieldText(body[`c${n}_operator`], 40) || 'equals',
    value: fieldText(body[`c${n}_value`], LIST_CHARS),
    caseSensitive: fieldText(body[`c${n}_case`], 10) === '1',
  }))
  return {
    attribute: fieldText(body.attribute),
    description: fieldText(body.description),
    enabled: submitted ? enabled === '1' : enabled !== '0',
    match: fieldText(body.match, 40) || 'all',
    conditions,
    then: actionRows(body, 'then'),
    else: actionRows(body, 'else'),
    json: fieldText(body.json, LIST_CHARS),
  }
}

/** What the editor's buttons ask besides saving and previewing: add or remove a row, show the chosen actions' fields. */
export function editedForm(form: RuleForm, op: string): RuleForm | undefined {
  const removed = /^remove_(c|then|else)_(\d{1,3})$/.exec(op)
  if (removed) {
    const at = Number(removed[2])
    if (removed[1] === 'c') return { ...form, conditions: form.conditions.filter((_, i) => i !== at) }
    const side = removed[1] === 'then' ? 'then' : 'else'
    return { ...form, [side]: form[side].filter((_, i) => i !== at) }
  }
  if (op === 'add_condition' && form.conditions.length < RULE_LIMITS.groupItems) return { ...form, conditions: [...form.conditions, newConditionRow()] }
  if (op === 'add_then' && form.then.length < RULE_LIMITS.actionsPerRule) return { ...form, then: [...form.then, newActionRow()] }
  if (op === 'add_else' && form.else.length < RULE_LIMITS.actionsPerRule) return { ...form, else: [...form.else, newActionRow()] }
  if (op === 'refresh' || op.startsWith('add_')) return form
  return undefined
}
