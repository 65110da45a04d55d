import type { RuleRow } from '../db/schema.js'
import { BadRequestError } from '../errors.js'
import type { RuleScopeOf } from '../rule-sets/rule-sets.js'
import { readRule, type RuleInput } from '../rules/rule-input.js'
import { ruleSpecOf } from '../rules/rule-store.js'
import type { RuleSpec } from '../rules/rule-types.js'
import { ruleWords } from '../rules/rule-words.js'
import { templateNamed } from '../templates/template-catalog.js'
import { checkCodes, type CheckCode } from '../templates/template-codes.js'
import { emptyRuleForm, fieldText, newActionRow, newConditionRow, readRuleForm, type RuleForm } from './rule-form.js'
import { jsonOfInput, ruleFormOf, ruleInputOf } from './rule-form-input.js'
import { PREVIEW_PRODUCTS, type PreviewPanel, type PreviewSample } from './rule-preview-views.js'

// What the rule editor's routes work out between the request and the page: the form of a saved
// rule or of a prefill, the rule a form or its JSON text stands for, and the drafts of a preview.

/** The editor's state besides its scope: the form, what went wrong, the preview. */
export interface EditorState {
  form: RuleForm
  problem?: string
  jsonOnly: boolean
  jsonOpen: boolean
  preview?: PreviewPanel
  sample: PreviewSample
  fix: CheckCode | undefined
}

/** The form with its JSON text made from its fields (kept as it was when they do not make a rule body). */
export function withJson(form: RuleForm): RuleForm {
  try {
    return { ...form, json: jsonOfInput(ruleInputOf(form)) }
  } catch {
    return form
  }
}

/** The check of the channel's template a "Fix with a rule" link names. */
export function fixOf(scope: RuleScopeOf, code: string): CheckCode | undefined {
  const template = scope.channel ? templateNamed(scope.channel.template) : undefined
  return code === '' || !template ? undefined : checkCodes(template).find((candidate) => candidate.code === code)
}

export function sampleOf(body: Record<string, unknown>): PreviewSample {
  return { id: fieldText(body.preview_id, 1000), filter: fieldText(body.preview_filter, 10_000), changedOnly: fieldText(body.preview_changed, 10) === '1' }
}

/** A saved rule's editor: its form, or its JSON alone when the form cannot show it. */
export function savedState(rule: RuleRow): EditorState {
  const spec = ruleSpecOf(rule)
  const form = ruleFormOf(spec)
  const sample = { id: '', filter: '', changedOnly: false }
  if (form) return { form, jsonOnly: false, jsonOpen: false, sample, fix: undefined }
  const json = jsonOfInput({ enabled: spec.enabled, description: spec.description, attribute: spec.attribute, if: spec.if, then: spec.then, else: spec.else })
  return { form: { ...emptyRuleForm(), json }, jsonOnly: true, jsonOpen: true, sample, fix: undefined }
}

/** A new rule's editor, prefilled by the query's fields when it names any (the diagnostics' links). */
export function newState(scope: RuleScopeOf, query: Record<string, unknown>): EditorState {
  const prefilled = Object.keys(query).some((key) => key === 'attribute' || /^(c|then|else)\d{1,3}_/.test(key))
  const read = prefilled ? readRuleForm(query, false) : emptyRuleForm()
  const form = {
    ...read,
    conditions: read.conditions.length > 0 ? read.conditions : [newConditionRow()],
    then: read.then.length > 0 ? read.then : [newActionRow()],
  }
  return {
    form: withJson(form),
    jsonOnly: false,
    jsonOpen: false,
    sample: { id: '', filter: '', changedOnly: false },
    fix: fixOf(scope, fieldText(query.fix, 100)),
  }
}

/** The rule body a form stands for: its fields, or (`json`) its JSON text. */
export function inputOf(form: RuleForm, json: boolean): RuleInput {
  if (!json) return ruleInputOf(form)
  let parsed: unknown
  try {
    parsed = JSON.parse(form.json)
  } catch (error) {
    throw new BadRequestError(`json: not valid JSON: ${(error as Error).message}`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new BadRequestError('json: a rule object is required ({"attribute": "…", "then": [{"action": "set", "value": "…"}]})')
  }
  return parsed as RuleInput
}

/** The id of the edited rule among a preview's drafts. */
export const NEW_DRAFT_ID = 'new'

/**
 * The drafts a preview runs: the saved rules with the edited one replaced by `input` (its fields
 * over the saved ones, as a save merges them), or `input` added last; and the panel's rules in words.
 */
export function draftsOf(rules: RuleRow[], edited: RuleRow | undefined, input: RuleInput): { drafts: RuleInput[]; index: number } {
  const saved: (RuleSpec | (RuleInput & { id: string }))[] = rules.map(ruleSpecOf)
  if (!edited) return { drafts: [...saved, { ...input, id: NEW_DRAFT_ID }], index: saved.length }
  const index = rules.findIndex((rule) => rule.id === edited.id)
  saved[index] = { ...ruleSpecOf(edited), ...input, id: edited.id }
  return { drafts: saved as RuleInput[], index }
}

/** The panel of a preview that ran `drafts` (each checked by the preview already). */
export function panelOf(drafts: RuleInput[], index: number, result: PreviewPanel['result']): PreviewPanel {
  const rules = drafts.map((draft) => {
    const rule = readRule(draft)
    return { id: String((draft as { id?: unknown }).id ?? ''), words: ruleWords(rule), enabled: rule.enabled }
  })
  const current = readRule(drafts[index] ?? {})
  return { result, problem: undefined, draftId: rules[index]?.id ?? NEW_DRAFT_ID, attribute: current.attribute, rules }
}

/** The preview's body: the drafts, and the sample's products. */
export function previewBody(drafts: RuleInput[], sample: PreviewSample): Record<string, unknown> {
  return {
    rules: drafts,
    limit: PREVIEW_PRODUCTS,
    changed_only: sample.changedOnly,
    summary: true,
    ...(sample.id.trim() === '' ? {} : { ids: [sample.id.trim()] }),
    ...(sample.filter.trim() === '' ? {} : { filter: sample.filter }),
  }
}
