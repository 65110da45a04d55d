import type { SqlQuoter } from '../feeds/sql-quoter.js'
import type { Action, Condition, Group } from './rule-types.js'
import { BLANK, BLANKS, isNumberSql, numericSql, WHITE_SPACE } from '../db/number-text.js'

// What each operator and action does, as SQL over a row's current values (never NULL: a missing
// attribute reads as ''), so that rules run inside the statements that read and export the rows.
// Conditions are true or false, never NULL; text comparisons ignore case unless told; empty means
// missing or blanks only; number operators are false unless both sides are numbers.

/** What a rule's SQL reads: the SQL of an attribute's current value. */
export interface RuleColumns {
  read(attribute: string): string
}

// Blanks and numbers as every comparison reads them (src/db/number-text.ts).

/** SQL: `v` under the collation rules fold case with (migration 0017): Unicode's mapping, whatever the database's locale. */
export function folding(v: string): string {
  return `(${v} COLLATE catalog_fold)`
}

/**
 * SQL: the text `call` makes of `v` under the folding collation, given back the database's own: a
 * value a rule writes keeps one collation, so that comparing it with another is never ambiguous.
 */
function folded(call: (v: string) => string, v: string): string {
  return `(${call(folding(v))} COLLATE "default")`
}
export function blankSql(v: string): string {
  return `(${v} = '' OR btrim(${v}, ${BLANKS}) = '')`
}

/** SQL: the group holds (all of its items, or any). */
export function groupSql(q: SqlQuoter, group: Group, columns: RuleColumns): string {
  const [items, joiner] = 'all' in group ? [group.all, ' AND '] : [group.any, ' OR ']
  return `(${items.map((item) => ('attribute' in item ? conditionSql(q, item, columns) : groupSql(q, item, columns))).join(joiner)})`
}

export function conditionSql(q: SqlQuoter, condition: Condition, columns: RuleColumns): string {
  const v = columns.read(condition.attribute)
  const exact = condition.case_sensitive === true
  const fold = (sql: string) => (exact ? sql : folded((v) => `lower(${v})`, sql))
  const literal = (text: string) => fold(q.escapeLiteral(text))
  const value = condition.value ?? ''
  // The value as the client wrote it (a JavaScript number would round 20 digits to 17).
  const number = (op: string) => `(CASE WHEN ${isNumberSql(v)} THEN ${numericSql(v)} ${op} ${q.escapeLiteral(value.trim())}::numeric ELSE false END)`
  switch (condition.operator) {
    case 'equals':
      return `(${fold(v)} = ${literal(value)})`
    case 'not_equals':
      return `(${fold(v)} <> ${literal(value)})`
    case 'contains':
      return `(strpos(${fold(v)}, ${literal(value)}) > 0)`
    case 'not_contains':
      return `(strpos(${fold(v)}, ${literal(value)}) = 0)`
    case 'starts_with':
      return `starts_with(${fold(v)}, ${literal(value)})`
    case 'ends_with':
      return `(right(${fold(v)}, ${[...value].length}) = ${literal(value)})`
    case 'in':
      return `(${fold(v)} IN (${(condition.values ?? []).map(literal).join(', ')}))`
    case 'not_in':
      return `(${fold(v)} NOT IN (${(condition.values ?? []).map(literal).join(', ')}))`
    case 'is_empty':
      return blankSql(v)
    case 'is_not_empty':
      return `(NOT ${blankSql(v)})`
    case 'greater_than':
      return number('>')
    case 'greater_or_equal':
      return number('>=')
    case 'less_than':
      return number('<')
    case 'less_or_equal':
      return number('<=')
    case 'matches':
      return exact ? `(${v} ~ ${q.escapeLiteral(value)})` : `(${folding(v)} ~* ${q.escapeLiteral(value)})`
    case 'length_greater_than':
      return `(char_length(${v}) > ${Number(value)})`
  }
}

/** SQL of a text that names attributes as `{name}`: the text with each replaced by the attribute's value. */
export function templateSql(q: SqlQuoter, template: string, columns: RuleColumns): string {
  const parts = template.split(/\{([^{}]+)\}/)
  const sql = parts.flatMap((part, i) => (i % 2 === 1 ? [columns.read(part)] : part === '' ? [] : [q.escapeLiteral(part)]))
  return sql.length === 0 ? `''` : `(${sql.join(' || ')})`
}

/** The attributes a text names as `{name}`. */
export function templateAttributes(template: string): string[] {
  return [...template.matchAll(/\{([^{}]+)\}/g)].map((match) => match[1] ?? '')
}

/** SQL: the value `current` after the action (text, never NULL). Exclude is the pipeline's (it writes no value). */
export function actionSql(q: SqlQuoter, action: Action, current: string, columns: RuleColumns): string {
  const text = (value: string) => templateSql(q, value, columns)
  switch (action.action) {
    case 'set':
      return text(action.value)
    case 'copy':
      return columns.read(action.from)
    case 'append':
    case 'prepend': {
      const added = text(action.value)
      const joined =
        action.action === 'append'
          ? `${current} || ${q.escapeLiteral(action.separator ?? '')} || ${added}`
          : `${added} || ${q.escapeLiteral(action.separator ?? '')} || ${current}`
      return `(CASE WHEN ${blankSql(added)} THEN ${current} WHEN ${blankSql(current)} THEN ${added} ELSE ${joined} END)`
    }
    case 'concat': {
      const parts = action.parts.map((part) => ('attribute' in part ? columns.read(part.attribute) : q.escapeLiteral(part.value)))
      return `concat_ws(${q.escapeLiteral(action.separator ?? ' ')}, ${parts.map((p) => `CASE WHEN ${blankSql(p)} THEN NULL ELSE ${p} END`).join(', ')})`
    }
    case 'replace':
      return action.case_sensitive === false
        ? folded(
            (v) => `regexp_replace(${v}, ${q.escapeLiteral(escapeRegex(action.find))}, ${q.escapeLiteral(escapeReplacement(action.replacement))}, 'gi')`,
            current,
          )
        : `replace(${current}, ${q.escapeLiteral(action.find)}, ${q.escapeLiteral(action.replacement)})`
    case 'map':
      return mapSql(q, action, current)
    case 'regex_replace':
      return action.case_sensitive === false
        ? folded((v) => `regexp_replace(${v}, ${q.escapeLiteral(action.pattern)}, ${q.escapeLiteral(regexReplacement(action.replacement))}, 'gi')`, current)
        : `regexp_replace(${current}, ${q.escapeLiteral(action.pattern)}, ${q.escapeLiteral(regexReplacement(action.replacement))}, 'g')`
    case 'split_take':
      return splitTakeSql(q, action, current)
    case 'case':
      return caseSql(action.to, current)
    case 'trim':
      return `btrim(regexp_replace(${current}, '${BLANK}+', ' ', 'g'))`
    case 'strip_html':
      return `catalog_html_text(${current})`
    case 'round':
      return roundSql(action.decimals ?? 2, action.mode ?? 'half_up', current)
    case 'truncate':
      return truncateSql(q, action.max, action.suffix ?? '', current)
    case 'default_if_empty':
      return `(CASE WHEN ${blankSql(current)} THEN ${text(action.value)} ELSE ${current} END)`
    case 'exclude':
      return current
  }
}

/**
 * A whole value to another: looked up in a jsonb object (a binary search, whatever the size of the
 * map). Ignoring case, the object's keys are folded by Postgres as the value is (an uncorrelated
 * subquery: once per statement), so that both meet in the same spelling.
 */
function mapSql(q: SqlQuoter, action: Extract<Action, { action: 'map' }>, current: string): string {
  const entries = `${q.escapeLiteral(JSON.stringify(action.entries))}::jsonb`
  const otherwise = action.default === undefined ? current : q.escapeLiteral(action.default)
  if (action.case_sensitive === true) return `coalesce(${entries} ->> ${current}, ${otherwise})`
  const lower = (v: string) => folded((x) => `lower(${x})`, v)
  return `coalesce((SELECT jsonb_object_agg(${lower('e.key')}, e.value) FROM jsonb_each(${entries}) AS e) ->> ${lower(current)}, ${otherwise})`
}

function splitTakeSql(q: SqlQuoter, action: Extract<Action, { action: 'split_take' }>, current: string): string {
  const parts = `string_to_array(${current}, ${q.escapeLiteral(action.separator)})`
  const from = action.from ?? 0
  const count = action.count ?? 1
  // From the start: elements from+1 …; from the end (negative): counted back from the last.
  const start = from >= 0 ? `${from + 1}` : `greatest(cardinality(${parts}) + ${from + 1}, 1)`
  const end = from >= 0 ? `${from + count}` : `cardinality(${parts}) + ${from + count}`
  return `coalesce(array_to_string((${parts})[${start}:${end}], ${q.escapeLiteral(action.join ?? action.separator)}), '')`
}

function caseSql(to: 'lower' | 'upper' | 'title' | 'sentence', current: string): string {
  if (to === 'lower') return folded((v) => `lower(${v})`, current)
  if (to === 'upper') return folded((v) => `upper(${v})`, current)
  if (to === 'title') return folded((v) => `initcap(${v})`, current)
  // Sentence: the first character after any leading blanks.
  const sentence = (v: string) => {
    const lead = `substring(${v} from '^${BLANK}*')`
    const rest = `substr(${v}, char_length(${lead}) + 1)`
    return `(${lead} || upper(left(${rest}, 1)) || lower(substr(${rest}, 2)))`
  }
  return folded(sentence, current)
}

/** A number rounded to `decimals` (half up, up or down), written with that many; any other value as it is. */
function roundSql(decimals: number, mode: 'half_up' | 'up' | 'down', current: string): string {
  const n = numericSql(current)
  const scale = `1${'0'.repeat(decimals)}`
  const rounded = mode === 'half_up' ? `round(${n}, ${decimals})` : `round(${mode === 'up' ? 'ceil' : 'floor'}(${n} * ${scale}) / ${scale}, ${decimals})`
  return `(CASE WHEN ${isNumberSql(current)} THEN ${rounded}::text ELSE ${current} END)`
}

/** At most `max` characters with the suffix, cut at the last word boundary (or within a word longer than that). */
function truncateSql(q: SqlQuoter, max: number, suffix: string, current: string): string {
  const room = Math.max(0, max - [...suffix].length)
  const cut = `left(${current}, ${room})`
  // The cut ends a word when the next character is a blank; otherwise the word it ends in goes, unless it is the only one.
  const atWord = `CASE WHEN substr(${current}, ${room + 1}, 1) ~ '${BLANK}' THEN ${cut}
    ELSE coalesce(nullif(regexp_replace(${cut}, '${BLANK}+[^${WHITE_SPACE}]*$', ''), ''), ${cut}) END`
  const trimmed = `regexp_replace(${atWord}, '${BLANK}+$', '')`
  return `(CASE WHEN char_length(${current}) <= ${max} THEN ${current} ELSE ${trimmed} || ${q.escapeLiteral(suffix)} END)`
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** A replacement taken as it is: only a backslash means something to Postgres there (\1, \&). */
function escapeReplacement(text: string): string {
  return text.replace(/\\/g, '\\\\')
}

/** A regex_replace replacement as clients write one ($1 … $9, $& for the match) in Postgres' form (\1, \&). */
function regexReplacement(text: string): string {
  return escapeReplacement(text).replace(/\$([1-9]|&)/g, (_m, g: string) => `\\${g}`)
}
