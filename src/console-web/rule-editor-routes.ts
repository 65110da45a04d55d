import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { RuleRow } from '../db/schema.js'
import { AppError, BadRequestError, NotFoundError } from '../errors.js'
import { rulesWithColumns, type RulesWithColumns } from '../rule-sets/rule-editing.js'
import { previewRules } from '../rule-sets/rule-preview.js'
import { createRule, updateRule } from '../rule-sets/rule-sets.js'
import { readRule } from '../rules/rule-input.js'
import type { ConsoleDeps } from './deps.js'
import { page } from './layout.js'
import { RuleEditorQuery, RuleItemParams, RuleScopeParams } from './page-params.js'
import { accountOfSession, requirePlatformCredential, sendPage, signedInWithPlatformCredential } from './pages.js'
import { ruleEditorPage } from './rule-editor-views.js'
import { draftsOf, fixOf, inputOf, newState, panelOf, previewBody, sampleOf, savedState, withJson, type EditorState } from './rule-editor-state.js'
import { editedForm, fieldText, readRuleForm } from './rule-form.js'
import { ruleFormOf } from './rule-form-input.js'
import { RULE_SCOPE_PREFIXES, ruleEditorPath, ruleScopeRef, rulesPath, type RuleParams } from './rule-links.js'
import { rulesTrail, scopeName } from './rule-page-views.js'

// The rule editor of a site or a channel: GET shows a saved rule or a new one (prefilled
// by the query); POST takes the form back with the button pressed: add or remove a row, preview
// the rules with this one in its place (nothing saved), or save it. A mistake is the page again
// with the message of the field, a 400; another account's site, channel or rule a 404.

/** What a preview may refuse and the panel shows: a filter, the channel's own settings, the read budget. */
const PREVIEW_REFUSALS = [400, 409, 429, 503]

interface Editing {
  accountId: string
  params: RuleParams
  context: RulesWithColumns
  /** The saved rule edited; undefined for a new one. */
  rule: RuleRow | undefined
}

/** The rule `params` names (a new one without `ruleId`) and what its editor shows with it. */
async function editing(deps: ConsoleDeps, request: FastifyRequest, params: RuleParams): Promise<Editing> {
  const accountId = accountOfSession(request)
  const context = await rulesWithColumns(deps.db, accountId, ruleScopeRef(params))
  const rule = params.ruleId === undefined ? undefined : context.rules.find((candidate) => candidate.id === params.ruleId)
  if (params.ruleId !== undefined && !rule) throw new NotFoundError(`Rule ${params.ruleId.slice(0, 40)} not found`)
  return { accountId, params, context, rule }
}

function render(request: FastifyRequest, reply: FastifyReply, editor: Editing, state: EditorState, status = 200) {
  const { scope, rules, columns } = editor.context
  const index = editor.rule ? rules.indexOf(editor.rule) : rules.length
  const title = editor.rule ? `Rule ${index + 1} of ${scopeName(scope)}` : `New rule of ${scopeName(scope)}`
  const body = ruleEditorPage({
    ...state,
    scope,
    session: request.consoleSession!,
    ruleId: editor.rule?.id,
    position: index + 1,
    columns,
    problem: state.problem,
    preview: state.preview,
    canSave: signedInWithPlatformCredential(request.consoleSession),
  })
  const trail = rulesTrail(scope, [title, ruleEditorPath(scope.site.id, scope.channel?.id, editor.rule?.id)])
  return sendPage(reply, page({ title, session: request.consoleSession, trail, body }), status)
}

async function save(deps: ConsoleDeps, request: FastifyRequest, reply: FastifyReply, editor: Editing, state: EditorState) {
  requirePlatformCredential(request, 'Saving a rule', 'each rule route of the platform interface (…/rules)')
  const { db } = deps
  const ref = ruleScopeRef(editor.params)
  try {
    const input = inputOf(state.form, state.jsonOpen)
    const saved = editor.rule ? await updateRule(db, editor.accountId, ref, editor.rule.id, input) : await createRule(db, editor.accountId, ref, input)
    return reply.redirect(`${rulesPath(saved.site_id, saved.channel_id)}?done=saved&rule=${saved.id}#rule-${saved.id}`, 303)
  } catch (error) {
    if (!(error instanceof BadRequestError)) throw error
    return render(request, reply, editor, { ...state, problem: error.message }, 400)
  }
}

async function preview(deps: ConsoleDeps, request: FastifyRequest, reply: FastifyReply, editor: Editing, state: EditorState) {
  let drafts: ReturnType<typeof draftsOf>
  try {
    drafts = draftsOf(editor.context.rules, editor.rule, inputOf(state.form, state.jsonOpen))
  } catch (error) {
    if (!(error instanceof BadRequestError)) throw error
    return render(request, reply, editor, { ...state, problem: error.message }, 400)
  }
  const budget = { timeoutMs: deps.config.PRODUCT_READ_TIMEOUT_MS, slots: deps.readSlots, limits: { feedMaxBytes: deps.config.FEED_MAX_BYTES } }
  try {
    const result = await previewRules(deps.db, editor.accountId, ruleScopeRef(editor.params), previewBody(drafts.drafts, state.sample), budget)
    const panel = panelOf(drafts.drafts, drafts.index, result)
    // The JSON previewed fills the form, when the form can show it.
    const shown = state.jsonOpen ? ruleFormOf(readRule(drafts.drafts[drafts.index] ?? {})) : state.form
    const form = shown ? { ...shown, json: state.form.json } : state.form
    return render(request, reply, editor, { ...state, form, jsonOnly: shown === undefined, preview: panel })
  } catch (error) {
    if (!(error instanceof AppError) || !PREVIEW_REFUSALS.includes(error.statusCode)) throw error
    // The rule of the form is the preview's draft `rules[index]`: its mistakes are the form's.
    const own = `rules[${drafts.index}].`
    if (error.message.startsWith(own)) return render(request, reply, editor, { ...state, problem: error.message.slice(own.length) }, 400)
    const panel = { result: undefined, problem: error.message, draftId: '', attribute: null, rules: [] }
    return render(request, reply, editor, { ...state, preview: panel }, error.statusCode)
  }
}

async function post(deps: ConsoleDeps, request: FastifyRequest, reply: FastifyReply, params: RuleParams) {
  const editor = await editing(deps, request, params)
  const body = (request.body ?? {}) as Record<string, unknown>
  const op = fieldText(body.op, 40)
  const json = op.endsWith('_json')
  const form = readRuleForm(body, true)
  const state: EditorState = {
    form: json ? form : withJson(form),
    jsonOnly: fieldText(body.json_only, 4) === '1',
    jsonOpen: json,
    sample: sampleOf(body),
    fix: fixOf(editor.context.scope, fieldText(body.fix, 100)),
  }
  const edited = editedForm(form, op)
  if (edited) return render(request, reply, editor, { ...state, form: withJson(edited) })
  if (op === 'save' || op === 'save_json') return save(deps, request, reply, editor, state)
  if (op === 'preview' || op === 'preview_json') return preview(deps, request, reply, editor, state)
  return render(request, reply, editor, state)
}

export const ruleEditorRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  for (const prefix of RULE_SCOPE_PREFIXES) {
    app.get(`${prefix}/rules/new`, { schema: { hide: true, params: RuleScopeParams, querystring: RuleEditorQuery } }, async (request, reply) => {
      const editor = await editing(deps, request, request.params)
      return render(request, reply, editor, newState(editor.context.scope, request.query))
    })
    app.get(`${prefix}/rules/:ruleId`, { schema: { hide: true, params: RuleItemParams } }, async (request, reply) => {
      const editor = await editing(deps, request, request.params)
      return render(request, reply, editor, savedState(editor.rule!))
    })
    app.post(`${prefix}/rules/new`, { schema: { hide: true, params: RuleScopeParams } }, (request, reply) => post(deps, request, reply, request.params))
    app.post(`${prefix}/rules/:ruleId`, { schema: { hide: true, params: RuleItemParams } }, (request, reply) => post(deps, request, reply, request.params))
  }
}
