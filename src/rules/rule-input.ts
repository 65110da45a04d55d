import { BadRequestError } from '../errors.js'
import { excerpt } from '../input/text-input.js'
import { checkAction } from './action-input.js'
import { attributeName, checkPattern, isNumber, RULE_LIMITS, ruleFlag, ruleText } from './rule-values.js'
import { ACTIONS, OPERATORS, type Action, type Condition, type Group, type Operator, type RuleSpec } from './rule-types.js'

// What a client may send as a rule: every field checked here, a 400 naming the field for each
// mistake, and every quantity bounded (rule-values.ts, README "Limits"): a rule never meets an
// export it cannot run.

/** A rule's fields as a client sends them (create, or replace whole on update). */
export interface RuleInput {
  enabled?: unknown
  description?: unknown
  attribute?: unknown
  if?: unknown
  then?: unknown
  else?: unknown
}

/** A rule as saved, from a body; `id` and position are the store's. */
export function readRule(input: RuleInput): Omit<RuleSpec, 'id'> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new BadRequestError('body: a rule object is required')
  const then = readActions(input.then, 'then', true)
  const otherwise = readActions(input.else, 'else', false)
  if (then.length + otherwise.length > RULE_LIMITS.actionsPerRule) {
    throw new BadRequestError(`then, else: at most ${RULE_LIMITS.actionsPerRule} actions in a rule`)
  }
  const onlyExcludes = [...then, ...otherwise].every((action) => action.action === 'exclude')
  const attribute = input.attribute === undefined || input.attribute === null ? null : attributeName(input.attribute, 'attribute')
  // The product's key: a rule writing it could make two products one, or one without an id.
  if (attribute !== null && attribute.trim().toLowerCase() === 'id') throw new BadRequestError("attribute: id is the product's key; a rule cannot write it")
  if (attribute === null && !onlyExcludes)
    throw new BadRequestError('attribute: is required (the attribute the actions write); only a rule that only excludes has none')
  return {
    enabled: ruleFlag(input.enabled, 'enabled', true),
    description: ruleText(input.description, 'description', { optional: true }),
    attribute,
    if: input.if === undefined || input.if === null ? null : readGroup(input.if, 'if', 1),
    then,
    else: otherwise,
  }
}

function readActions(value: unknown, field: string, required: boolean): Action[] {
  if (value === undefined || value === null) {
    if (required) throw new BadRequestError(`${field}: at least one action is required`)
    return []
  }
  if (!Array.isArray(value)) throw new BadRequestError(`${field}: must be a list of actions`)
  if (required && value.length === 0) throw new BadRequestError(`${field}: at least one action is required`)
  if (value.length > RULE_LIMITS.actionsPerRule) throw new BadRequestError(`${field}: at most ${RULE_LIMITS.actionsPerRule} actions in a rule`)
  return value.map((item, i) => {
    const path = `${field}[${i}]`
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new BadRequestError(`${path}: an action object is required`)
    const name = (item as { action?: unknown }).action
    if (typeof name !== 'string' || !(ACTIONS as readonly string[]).includes(name)) {
      throw new BadRequestError(`${path}.action: ${typeof name === 'string' ? `"${excerpt(name, 40)}" is no action; ` : ''}use one of ${ACTIONS.join(', ')}`)
    }
    return checkAction(item as Record<string, unknown>, path)
  })
}

/** A group `{all: [...]}` or `{any: [...]}`; `depth` 1 may hold groups, depth 2 conditions only. */
function readGroup(value: unknown, field: string, depth: number): Group {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new BadRequestError(`${field}: a group {"all": […]} or {"any": […]} is required`)
  const keys = Object.keys(value)
  const kind = keys.length === 1 && (keys[0] === 'all' || keys[0] === 'any') ? keys[0] : undefined
  if (!kind) throw new BadRequestError(`${field}: a group has exactly one of "all" and "any"`)
  const items: unknown = (value as Record<string, unknown>)[kind]
  const path = `${field}.${kind}`
  if (!Array.isArray(items) || items.length === 0) throw new BadRequestError(`${path}: a non-empty list of conditions is required`)
  if (items.length > RULE_LIMITS.groupItems) throw new BadRequestError(`${path}: at most ${RULE_LIMITS.groupItems} conditions and groups`)
  const read = items.map((item: unknown, i): Condition | Group => {
    const at = `${path}[${i}]`
    const isGroup = typeof item === 'object' && item !== null && ('all' in item || 'any' in item)
    if (!isGroup) return readCondition(item, at)
    if (depth >= 2) throw new BadRequestError(`${at}: groups nest two levels deep at most (a group inside a group holds conditions only)`)
    return readGroup(item, at, depth + 1)
  })
  return kind === 'all' ? { all: read } : { any: read }
}

const NUMBER_OPERATORS: readonly Operator[] = ['greater_than', 'greater_or_equal', 'less_than', 'less_or_equal']

function readCondition(value: unknown, field: string): Condition {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BadRequestError(`${field}: a condition object is required`)
  const input = value as Record<string, unknown>
  const operator = input.operator
  if (typeof operator !== 'string' || !(OPERATORS as readonly string[]).includes(operator)) {
    throw new BadRequestError(`${field}.operator: use one of ${OPERATORS.join(', ')}`)
  }
  const condition: Condition = { attribute: attributeName(input.attribute, `${field}.attribute`), operator: operator as Operator }
  if (input.case_sensitive !== undefined && input.case_sensitive !== null)
    condition.case_sensitive = ruleFlag(input.case_sensitive, `${field}.case_sensitive`, false)
  if (operator === 'is_empty' || operator === 'is_not_empty') return condition
  if (operator === 'in' || operator === 'not_in') {
    const values = input.values
    if (!Array.isArray(values) || values.length === 0) throw new BadRequestError(`${field}.values: a non-empty list of texts is required`)
    if (values.length > RULE_LIMITS.listEntries) throw new BadRequestError(`${field}.values: at most ${RULE_LIMITS.listEntries} values`)
    return { ...condition, values: values.map((v, i) => ruleText(v, `${field}.values[${i}]`)) }
  }
  const text = operator === 'matches' ? checkPattern(input.value, `${field}.value`) : ruleText(input.value, `${field}.value`)
  if (NUMBER_OPERATORS.includes(operator as Operator) && !isNumber(text)) throw new BadRequestError(`${field}.value: must be a number (such as 19.99)`)
  if (operator === 'length_greater_than' && !/^\s*\d{1,9}\s*$/.test(text)) throw new BadRequestError(`${field}.value: must be a whole number of characters`)
  return { ...condition, value: text }
}

/** Each pattern of a rule with the field that holds it: what the database must compile (rules.ts). */
export function rulePatterns(rule: Omit<RuleSpec, 'id'>): { field: string; pattern: string; caseSensitive: boolean }[] {
  const found: { field: string; pattern: string; caseSensitive: boolean }[] = []
  const walk = (group: Group, path: string) => {
    const [kind, items] = 'all' in group ? ['all', group.all] : ['any', group.any]
    items.forEach((item, i) => {
      const at = `${path}.${kind}[${i}]`
      if (!('attribute' in item)) walk(item, at)
      else if (item.operator === 'matches') found.push({ field: `${at}.value`, pattern: item.value ?? '', caseSensitive: item.case_sensitive === true })
    })
  }
  if (rule.if) walk(rule.if, 'if')
  for (const [list, name] of [
    [rule.then, 'then'],
    [rule.else, 'else'],
  ] as const) {
    list.forEach((action, i) => {
      if (action.action === 'regex_replace')
        found.push({ field: `${name}[${i}].pattern`, pattern: action.pattern, caseSensitive: action.case_sensitive !== false })
    })
  }
  return found
}
