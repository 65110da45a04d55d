import { BadRequestError } from '../errors.js'
import { excerpt } from '../input/text-input.js'
import type { RuleInput } from '../rules/rule-input.js'
import type { Action, Condition, ConcatPart, Group, RuleSpec } from '../rules/rule-types.js'
import { paramsOf, type ActionRow, type ConditionRow, type ParamKey, type RuleForm } from './rule-form.js'

// The editor's form as the rule the platform interface takes (readRule checks it and names the
// field of each mistake), and a saved rule back as the form. Two texts of the form are written
// out here: a map's entries, one `from => to` a line, and a concat's parts, `{attribute}` for an
// attribute's value and any other text as it is, on one line or several.

/** A condition row left empty: the form shows one, and it says nothing. */
export function blankCondition(row: ConditionRow): boolean {
  return row.attribute.trim() === '' && row.value.trim() === ''
}

/** The form as a rule body (readRule checks it); a map's or a concat's text it cannot read is a 400 naming the field. */
export function ruleInputOf(form: RuleForm): RuleInput {
  if (form.match !== 'all' && form.match !== 'any') throw new BadRequestError(`match: "${excerpt(form.match, 40)}" is neither all nor any`)
  const conditions = form.conditions.filter((row) => !blankCondition(row)).map(conditionOf)
  const group: Group | null = conditions.length === 0 ? null : form.match === 'any' ? { any: conditions } : { all: conditions }
  return {
    enabled: form.enabled,
    description: form.description,
    attribute: form.attribute.trim() === '' ? null : form.attribute.trim(),
    if: group,
    then: form.then.map((row, i) => actionOf(row, `then[${i}]`)),
    else: form.else.map((row, i) => actionOf(row, `else[${i}]`)),
  }
}

function lines(text: string): string[] {
  return text.split(/\r?\n/)
}

function conditionOf(row: ConditionRow): Condition {
  const condition = { attribute: row.attribute.trim(), operator: row.operator, ...(row.caseSensitive ? { case_sensitive: true } : {}) } as Condition
  if (row.operator === 'is_empty' || row.operator === 'is_not_empty') return condition
  if (row.operator === 'in' || row.operator === 'not_in') return { ...condition, values: lines(row.value).filter((line) => line.trim() !== '') }
  return { ...condition, value: row.value }
}

/** A whole number as typed; anything else as it is, for readRule to name. */
function numberOf(text: string | undefined): number | string | undefined {
  if (text === undefined || text.trim() === '') return undefined
  return /^\s*-?\d{1,9}\s*$/.test(text) ? Number(text) : text
}

function actionOf(row: ActionRow, path: string): Action {
  const p = (key: ParamKey) => row.params[key] ?? ''
  // An optional parameter left empty takes the action's default.
  const optional = (key: ParamKey) => (p(key) === '' ? {} : { [key]: p(key) })
  const caseSensitive = p('case_sensitive') === '1'
  const fields: Record<string, unknown> = { action: row.action }
  switch (row.action) {
    case 'concat':
      Object.assign(fields, { parts: partsOf(p('parts'), `${path}.parts`), ...optional('separator') })
      break
    case 'map':
      Object.assign(fields, { entries: entriesOf(p('entries'), `${path}.entries`), ...optional('default'), case_sensitive: caseSensitive })
      break
    case 'split_take':
      Object.assign(fields, { separator: p('separator'), from: numberOf(row.params.take_from), count: numberOf(row.params.count), ...optional('join') })
      break
    case 'round':
      Object.assign(fields, { decimals: numberOf(row.params.decimals), ...optional('mode') })
      break
    case 'truncate':
      Object.assign(fields, { max: numberOf(row.params.max), ...optional('suffix') })
      break
    case 'copy':
      fields.from = p('from').trim()
      break
    default:
      for (const key of paramsOf(row.action)) {
        if (key === 'case_sensitive') fields.case_sensitive = caseSensitive
        else if (key === 'separator') Object.assign(fields, optional('separator'))
        else fields[key] = p(key)
      }
  }
  return fields as unknown as Action
}

/** `from => to` lines: blank lines skipped, blanks around each side dropped. */
function entriesOf(text: string, field: string): Record<string, string> {
  const pairs: [string, string][] = []
  lines(text).forEach((line, i) => {
    if (line.trim() === '') return
    const arrow = line.indexOf('=>')
    if (arrow < 0) throw new BadRequestError(`${field}: line ${i + 1} "${excerpt(line, 60)}" has no "=>"; write one entry a line as  from => to`)
    const from = line.slice(0, arrow).trim()
    if (from === '') throw new BadRequestError(`${field}: line ${i + 1} has nothing before "=>"`)
    if (pairs.some(([seen]) => seen === from)) throw new BadRequestError(`${field}: "${excerpt(from, 60)}" is listed twice`)
    pairs.push([from, line.slice(arrow + 2).trim()])
  })
  if (pairs.length === 0) throw new BadRequestError(`${field}: write at least one entry, one a line as  from => to`)
  return Object.fromEntries(pairs)
}

/** `{attribute}` for an attribute's value, any other text as it is (blanks around it dropped). */
function partsOf(text: string, field: string): ConcatPart[] {
  const parts: ConcatPart[] = []
  for (const line of lines(text)) {
    let last = 0
    for (const match of line.matchAll(/\{([^{}]+)\}/g)) {
      const literal = line.slice(last, match.index).trim()
      if (literal !== '') parts.push({ value: literal })
      parts.push({ attribute: (match[1] ?? '').trim() })
      last = match.index + match[0].length
    }
    const rest = line.slice(last).trim()
    if (rest !== '') parts.push({ value: rest })
  }
  if (parts.length === 0) throw new BadRequestError(`${field}: write at least one part: {attribute} for an attribute's value, or a text`)
  return parts
}

/** The rule as body text for the advanced editor. */
export function jsonOfInput(input: RuleInput): string {
  return JSON.stringify(input, null, 2)
}

/** The form of a saved rule; undefined when the form cannot show it (groups inside the condition, texts the lines would change). */
export function ruleFormOf(rule: Omit<RuleSpec, 'id'>): RuleForm | undefined {
  const group = rule.if
  const items = group === null ? [] : 'all' in group ? group.all : group.any
  if (items.some((item) => !('attribute' in item))) return undefined
  const conditions = (items as Condition[]).map((c) => ({
    attribute: c.attribute,
    operator: c.operator,
    value: c.values ? c.values.join('\n') : (c.value ?? ''),
    caseSensitive: c.case_sensitive === true,
  }))
  if ((items as Condition[]).some((c) => c.values?.some((v) => v.includes('\n') || v.trim() === ''))) return undefined
  const then = rule.then.map(actionRowOf)
  const otherwise = rule.else.map(actionRowOf)
  if ([...then, ...otherwise].some((row) => row === undefined)) return undefined
  const json = jsonOfInput({ enabled: rule.enabled, description: rule.description, attribute: rule.attribute, if: rule.if, then: rule.then, else: rule.else })
  return {
    attribute: rule.attribute ?? '',
    description: rule.description,
    enabled: rule.enabled,
    match: group !== null && 'any' in group ? 'any' : 'all',
    conditions: conditions.length > 0 ? conditions : [{ attribute: '', operator: 'equals', value: '', caseSensitive: false }],
    then: then as ActionRow[],
    else: otherwise as ActionRow[],
    json,
  }
}

/** A text the lines keep as it is: no line break, no blanks around it. */
const keeps = (text: string) => !/[\r\n]/.test(text) && text.trim() === text

function actionRowOf(action: Action): ActionRow | undefined {
  const params: Partial<Record<ParamKey, string>> = {}
  for (const [key, value] of Object.entries(action)) {
    if (key === 'action' || value === undefined) continue
    if (key === 'case_sensitive') params.case_sensitive = value === true ? '1' : ''
    else if (key === 'from' && action.action === 'split_take') params.take_from = String(value)
    else if (typeof value === 'string' || typeof value === 'number') params[key as ParamKey] = String(value)
  }
  if (action.action === 'map') {
    const entries = Object.entries(action.entries)
    if (entries.some(([from, to]) => !keeps(from) || from === '' || from.includes('=>') || !keeps(to))) return undefined
    params.entries = entries.map(([from, to]) => `${from} => ${to}`).join('\n')
  }
  if (action.action === 'concat') {
    if (action.parts.some((part) => 'value' in part && (!keeps(part.value) || part.value === '' || /[{}]/.test(part.value)))) return undefined
    params.parts = action.parts.map((part) => ('attribute' in part ? `{${part.attribute}}` : part.value)).join('\n')
  }
  return { action: action.action, params }
}
