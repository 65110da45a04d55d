import { ACTIONS, OPERATORS, type Operator } from '../rules/rule-types.js'
import { OPERATOR_WORDS } from '../rules/rule-words.js'
import { html, type Html } from './html.js'
import { paramsOf, type ActionRow, type ConditionRow, type ParamKey } from './rule-form.js'

// The rows of the rule editor: a condition (attribute, operator, value) and an action with the
// fields of its parameters. Every action's fields are on the page; those of the actions not chosen
// are hidden (console.js shows the chosen one's as the choice changes; without script, the button
// "Show the fields of the chosen actions" does).

// The words of each operator (rule-words.ts), with what its value holds where that is not plain text.
const OPERATOR_HINTS: Partial<Record<Operator, string>> = {
  in: ' (one value a line)',
  not_in: ' (one value a line)',
  greater_than: ' (numbers)',
  greater_or_equal: ' (numbers)',
  less_than: ' (numbers)',
  less_or_equal: ' (numbers)',
  length_greater_than: ' (characters)',
}
const operatorLabel = (operator: Operator) => `${OPERATOR_WORDS[operator]}${OPERATOR_HINTS[operator] ?? ''}`

const ACTION_LABELS: Record<(typeof ACTIONS)[number], string> = {
  set: 'set to a value',
  copy: "copy another attribute's value",
  append: 'append a text',
  prepend: 'put a text before',
  concat: 'join parts (concat)',
  replace: 'replace a text',
  map: 'map values to others',
  regex_replace: 'replace a pattern',
  split_take: 'split and keep parts',
  case: 'change case',
  trim: 'trim blanks',
  strip_html: 'strip HTML',
  round: 'round a number',
  truncate: 'cut to a length (truncate)',
  default_if_empty: 'fill when empty',
  exclude: 'leave the product out (exclude)',
}

interface ParamField {
  label: string
  kind: 'text' | 'area' | 'number' | 'check' | 'columns' | { options: readonly string[] }
  hint?: string
}

const PARAM_FIELDS: Record<ParamKey, ParamField> = {
  value: { label: 'Value', kind: 'text', hint: 'may name attributes as {attribute}' },
  from: { label: 'From attribute', kind: 'columns' },
  parts: { label: 'Parts', kind: 'area', hint: "{attribute} for an attribute's value, any other text as it is; one or more a line" },
  find: { label: 'Find', kind: 'text' },
  pattern: { label: 'Pattern', kind: 'text', hint: 'a regular expression; no back-references or look-around' },
  replacement: { label: 'Replace with', kind: 'text', hint: 'for a pattern, $1 is its first group' },
  entries: { label: 'Entries', kind: 'area', hint: 'one a line:  from => to' },
  default: { label: 'Other values become', kind: 'text', hint: 'empty: other values stay as they are' },
  separator: { label: 'Separator', kind: 'text', hint: 'joining parts: a space when empty; splitting: required' },
  take_from: { label: 'Keep from part', kind: 'number', hint: '0 the first (default), -1 the last' },
  count: { label: 'Parts to keep', kind: 'number', hint: 'default 1' },
  join: { label: 'Join kept parts with', kind: 'text', hint: 'empty: the separator' },
  to: { label: 'Case', kind: { options: ['lower', 'upper', 'title', 'sentence'] } },
  decimals: { label: 'Decimals', kind: 'number', hint: 'default 2' },
  mode: { label: 'Rounding', kind: { options: ['half_up', 'up', 'down'] } },
  max: { label: 'Most characters', kind: 'number' },
  suffix: { label: 'Suffix when cut', kind: 'text', hint: 'such as …' },
  case_sensitive: { label: 'Case-sensitive', kind: 'check' },
}

function options(values: readonly string[], current: string, label: (value: string) => string = (value) => value): Html[] {
  return values.map((value) => html`<option value="${value}" ${value === current ? html` selected` : ''}>${label(value)}</option>`)
}

export function conditionRow(row: ConditionRow, i: number, problem: string | undefined): Html {
  const id = `c${i}`
  return html`<fieldset class="row" id="${id}" ${problem ? html`aria-describedby="${id}-problem"` : ''}>
    <legend>Condition ${i + 1}</legend>
    ${problem ? html`<p class="error" id="${id}-problem">${problem}</p>` : ''}
    <div><label for="${id}-attribute">Attribute</label><input id="${id}-attribute" name="${id}_attribute" value="${row.attribute}" list="rule-columns" /></div>
    <div>
      <label for="${id}-operator">Operator</label
      ><select id="${id}-operator" name="${id}_operator">
        ${options(OPERATORS, row.operator, (op) => operatorLabel(op as Operator))}
      </select>
    </div>
    <div>
      <label for="${id}-value">Value</label><textarea id="${id}-value" name="${id}_value" rows="${row.value.includes('\n') ? 4 : 1}">${row.value}</textarea>
    </div>
    <div class="check">
      <input type="checkbox" id="${id}-case" name="${id}_case" value="1" ${row.caseSensitive ? html` checked` : ''} /><label for="${id}-case"
        >Case-sensitive</label
      >
    </div>
    <button type="submit" name="op" value="remove_c_${i}" class="secondary" aria-label="Remove condition ${i + 1}">Remove</button>
  </fieldset>`
}

function paramField(id: string, name: string, key: ParamKey, row: ActionRow): Html {
  const field = PARAM_FIELDS[key]
  const value = row.params[key] ?? ''
  const shown = paramsOf(row.action).includes(key)
  const hint = field.hint ? html`<small id="${id}-${key}-hint" class="muted">${field.hint}</small>` : ''
  const described = field.hint ? html` aria-describedby="${id}-${key}-hint"` : ''
  const input =
    field.kind === 'check'
      ? html`<input type="checkbox" id="${id}-${key}" name="${name}_${key}" value="1" ${value === '1' ? html` checked` : ''} />`
      : field.kind === 'area'
        ? html`<textarea id="${id}-${key}" name="${name}_${key}" rows="4" ${described}>${value}</textarea>`
        : typeof field.kind === 'object'
          ? html`<select id="${id}-${key}" name="${name}_${key}">
              ${options(field.kind.options, value)}
            </select>`
          : html`<input
              id="${id}-${key}"
              name="${name}_${key}"
              value="${value}"
              ${field.kind === 'number' ? html`inputmode="numeric"` : ''}
              ${field.kind === 'columns' ? html`list="rule-columns"` : ''}${described}
            />`
  const users = ACTIONS.filter((action) => paramsOf(action).includes(key))
  const label = html`<label for="${id}-${key}">${field.label}</label>`
  return html`<div data-for="${users.join(' ')}" ${field.kind === 'check' ? html`class="check"` : ''} ${shown ? '' : html`hidden`}>
    ${field.kind === 'check' ? html`${input}${label}` : html`${label}${input}${hint}`}
  </div>`
}

/** An action row of `side` (then or else), its position `i`. */
export function actionRow(side: 'then' | 'else', row: ActionRow, i: number, problem: string | undefined): Html {
  const name = `${side}${i}`
  const id = `${side}${i}`
  const legend = `${side === 'then' ? 'Then' : 'Otherwise'}, action ${i + 1}`
  const keys = Object.keys(PARAM_FIELDS) as ParamKey[]
  return html`<fieldset class="row" id="${id}" data-action-row ${problem ? html`aria-describedby="${id}-problem"` : ''}>
    <legend>${legend}</legend>
    ${problem ? html`<p class="error" id="${id}-problem">${problem}</p>` : ''}
    <div>
      <label for="${id}-action">Action</label
      ><select id="${id}-action" name="${name}_action" data-action-select>
        ${options(ACTIONS, row.action, (action) => ACTION_LABELS[action as keyof typeof ACTION_LABELS])}
      </select>
    </div>
    ${keys.map((key) => paramField(id, name, key, row))}
    <button type="submit" name="op" value="remove_${side}_${i}" class="secondary" aria-label="Remove ${legend.toLowerCase()}">Remove</button>
  </fieldset>`
}
