import type { ConsoleSession } from '../accounts/console-sessions.js'
import type { RuleScopeOf } from '../rule-sets/rule-sets.js'
import type { CheckCode } from '../templates/template-codes.js'
import { html, type Html } from './html.js'
import { csrfField } from './layout.js'
import { blankCondition } from './rule-form-input.js'
import type { RuleForm } from './rule-form.js'
import { ruleEditorPath, rulesPath } from './rule-links.js'
import { scopeSentence } from './rule-page-views.js'
import { previewSection, type PreviewPanel, type PreviewSample } from './rule-preview-views.js'
import { actionRow, conditionRow } from './rule-row-views.js'

// The rule editor: a rule as a form a merchant fills in without writing JSON, its
// preview, and the rule as JSON for those who prefer it. A mistake comes back as this page with the
// message of the field (and the row it names marked), every field as it was typed.

export interface RuleEditorData {
  scope: RuleScopeOf
  session: ConsoleSession
  form: RuleForm
  /** The rule edited; undefined for a new one. */
  ruleId: string | undefined
  /** Its place among the scope's rules (a new one goes last). */
  position: number
  /** The stage's columns the attribute fields offer. */
  columns: string[]
  /** A refused rule's message. */
  problem: string | undefined
  /** The form cannot show the rule (groups inside its condition): only its JSON is edited. */
  jsonOnly: boolean
  /** The JSON text was what was sent: it stays open. */
  jsonOpen: boolean
  preview: PreviewPanel | undefined
  sample: PreviewSample
  /** The check a "Fix with a rule" link came from. */
  fix: CheckCode | undefined
  canSave: boolean
}

/** Where the message of a mistake belongs: a row of the form, or the form as a whole. */
function placeOf(problem: string | undefined, form: RuleForm): string {
  if (problem === undefined) return ''
  const action = /^(then|else)\[(\d+)\]/.exec(problem)
  if (action) return `${action[1]}${action[2]}`
  const condition = /^if\.(?:all|any)\[(\d+)\]/.exec(problem)
  if (condition) {
    const rows = form.conditions.flatMap((row, i) => (blankCondition(row) ? [] : [i]))
    return `c${rows[Number(condition[1])] ?? 0}`
  }
  return /^(attribute|description|json)\b/.exec(problem)?.[1] ?? ''
}

export function ruleEditorPage(data: RuleEditorData): Html {
  const { scope, form, problem } = data
  const place = placeOf(problem, form)
  const at = (name: string) => (place === name ? problem : undefined)
  const action = ruleEditorPath(scope.site.id, scope.channel?.id, data.ruleId)
  const defaultOp = data.jsonOnly ? 'preview_json' : 'preview'
  return html`${scopeSentence(scope)} ${data.fix ? fixNote(data.fix) : ''}
    ${problem ? html`<p class="error" role="alert" id="rule-problem">${problem}</p>` : ''}
    <form method="post" action="${action}" class="rule-editor" novalidate>
      ${csrfField(data.session)}
      <input type="hidden" name="form" value="1" />
      ${data.fix ? html`<input type="hidden" name="fix" value="${data.fix.code}" />` : ''}
      ${data.jsonOnly ? html`<input type="hidden" name="json_only" value="1" />` : ''}
      <button type="submit" name="op" value="${defaultOp}" class="default-submit" tabindex="-1" aria-hidden="true">Preview</button>
      ${data.jsonOnly ? jsonOnlyNote() : ruleFields(data, at)} ${previewSection(data.sample, data.preview, defaultOp)}
      <p class="form-buttons">
        ${data.canSave ? html`<button type="submit" name="op" value="${data.jsonOnly ? 'save_json' : 'save'}">Save the rule</button>` : savingNote()}
        <a href="${rulesPath(scope.site.id, scope.channel?.id)}">Back to the rules</a>
      </p>
      ${jsonSection(data, at('json'))}
    </form>
    <datalist id="rule-columns">${data.columns.map((column) => html`<option value="${column}"></option>`)}</datalist>`
}

function fixNote(code: CheckCode): Html {
  return html`<p class="live" role="note">
    Fixing <code>${code.code}</code>: ${code.message}. ${code.hint} Check the prefilled action below, preview it, then save.
  </p>`
}

function jsonOnlyNote(): Html {
  return html`<p class="notice" role="note">This rule has groups inside its condition, which the form does not show: edit it as JSON below.</p>`
}

function savingNote(): Html {
  return html`<span class="muted">Saving takes a sign-in with the platform credential (X-Auth-Token), as the rule routes of the platform interface do.</span>`
}

function ruleFields(data: RuleEditorData, at: (name: string) => string | undefined): Html {
  const { form } = data
  const attributeProblem = at('attribute')
  return html`<section aria-labelledby="rule-heading">
      <h2 id="rule-heading">The rule (position ${data.position})</h2>
      <div class="fields">
        <div>
          <label for="attribute">Attribute it writes</label
          ><input
            id="attribute"
            name="attribute"
            value="${form.attribute}"
            list="rule-columns"
            aria-describedby="attribute-hint"
            ${attributeProblem ? html`aria-invalid="true"` : ''}
          />
          <small id="attribute-hint" class="muted">an attribute of the stage, or a new one; none for a rule that only leaves products out</small>
        </div>
        <div><label for="description">Description</label><input id="description" name="description" value="${form.description}" size="50" /></div>
        <div class="check">
          <input type="checkbox" id="enabled" name="enabled" value="1" ${form.enabled ? html` checked` : ''} /><label for="enabled">Enabled</label>
        </div>
      </div>
    </section>
    <section aria-labelledby="condition-heading">
      <h2 id="condition-heading">When</h2>
      <p>
        <label for="match">The “then” actions run where</label
        ><select id="match" name="match">
          <option value="all" ${form.match === 'all' ? html` selected` : ''}>all</option>
          <option value="any" ${form.match === 'any' ? html` selected` : ''}>any</option>
        </select>
        of these conditions hold, the “otherwise” actions elsewhere. Without conditions, the “then” actions run on every product; an empty row is left out.
      </p>
      ${form.conditions.map((row, i) => conditionRow(row, i, at(`c${i}`)))}
      <button type="submit" name="op" value="add_condition" class="secondary">Add a condition</button>
    </section>
    ${actionsSection('then', data, at)} ${actionsSection('else', data, at)}`
}

function actionsSection(side: 'then' | 'else', { form }: RuleEditorData, problemOf: (name: string) => string | undefined): Html {
  const rows = form[side]
  const title = side === 'then' ? 'Then' : 'Otherwise'
  const none = side === 'then' ? 'At least one action is needed.' : 'No actions: other products keep the value.'
  return html`<section aria-labelledby="${side}-heading">
    <h2 id="${side}-heading">${title}</h2>
    <p class="muted">The actions run in order, each on the value the one before left. An optional field left empty takes its default.</p>
    ${rows.length === 0 ? html`<p class="muted">${none}</p>` : rows.map((row, i) => actionRow(side, row, i, problemOf(`${side}${i}`)))}
    <button type="submit" name="op" value="add_${side}" class="secondary">Add ${side === 'then' ? 'a “then”' : 'an “otherwise”'} action</button>
    <button type="submit" name="op" value="refresh" class="secondary" data-no-js>Show the fields of the chosen actions</button>
  </section>`
}

function jsonSection(data: RuleEditorData, problem: string | undefined): Html {
  const open = data.jsonOnly || data.jsonOpen || problem !== undefined
  const body = html`<p class="muted">
      The rule as the platform interface takes it (POST …/rules): <code>enabled</code>, <code>description</code>, <code>attribute</code>, <code>if</code>,
      <code>then</code>, <code>else</code>. These buttons use this text instead of the form.
    </p>
    <label for="json">Rule as JSON</label>
    <textarea id="json" name="json" rows="14" class="code" ${problem ? html`aria-invalid="true"` : ''}>${data.form.json}</textarea>
    <p>
      <button type="submit" name="op" value="preview_json" class="secondary">Preview the JSON</button>
      ${data.canSave ? html`<button type="submit" name="op" value="save_json" class="secondary">Save the JSON</button>` : ''}
    </p>`
  if (data.jsonOnly)
    return html`<section aria-labelledby="json-heading">
      <h2 id="json-heading">The rule as JSON</h2>
      ${body}
    </section>`
  return html`<details class="json" ${open ? html`open` : ''}>
    <summary>Advanced: edit the rule as JSON</summary>
    ${body}
  </details>`
}
