import type { OperationDocs } from '../http/openapi.js'
import { envelope, rule } from './openapi-examples.js'

// The OpenAPI docs of the rule operations of a site and of a channel (by operationId).

const failed = (summary: string, message: string) => ({ [summary.replace(/\W+/g, '-').toLowerCase()]: { summary, value: { success: false, message } } })

const RULE_FIELDS =
  'A rule is `{enabled, description, attribute, if, then, else}`. `attribute` is what the actions write (created when the ' +
  'stage has none). `if` is null (always) or `{"all": [...]}` / `{"any": [...]}` of conditions `{attribute, operator, value | ' +
  'values, case_sensitive}` and groups, two levels deep; operators: `equals`, `not_equals`, `contains`, `not_contains`, ' +
  '`starts_with`, `ends_with`, `in`, `not_in`, `is_empty`, `is_not_empty`, `greater_than`, `greater_or_equal`, `less_than`, ' +
  '`less_or_equal`, `matches`, `length_greater_than`; text comparisons ignore case unless `case_sensitive` is true, number ' +
  'operators are false unless both sides are numbers, empty is missing or blanks only. `then` (where the condition holds) and ' +
  '`else` run their actions in order: `set` (`value`, may name `{attribute}`s), `copy` (`from`), `append` and `prepend` ' +
  '(`value`, `separator`), `concat` (`parts` of `{attribute}` and `{value}`, `separator`), `replace` (`find`, `replacement`), ' +
  '`map` (`entries`, `default`), `regex_replace` (`pattern`, `replacement` with `$1`), `split_take` (`separator`, `from`, ' +
  '`count`, `join`), `case` (`to`: lower, upper, title, sentence), `trim`, `strip_html`, `round` (`decimals`, `mode`: half_up, ' +
  'up, down), `truncate` (`max`, `suffix`), `default_if_empty` (`value`), `exclude`. Patterns run in Postgres without ' +
  'back-references or look-around, so that none can backtrack. Every mistake is a 400 naming the field; at most 100 rules a ' +
  'scope, 20 actions a rule, 50 items a group, 1,000 map entries or values, 500 characters a pattern.'
const PREVIEW =
  'Writes nothing. `rules` (drafts standing in for the saved ones, in order), `ids` (at most 50), `filter` (a product-read ' +
  'condition choosing the products), `limit` (1 to 50, default 10), `changed_only` (only products the rules change or exclude), ' +
  '`summary` (false: no whole-stage pass). Answers per product `{id, before, after, excluded, steps: [{rule_id, matched, ' +
  'attribute, before, after, excluded}]}`, and a `summary` over the whole stage: products, changed, excluded, and how many ' +
  'products each rule matches.'

function scopeDocs(kind: 'Site' | 'Channel', where: string, extra: { preview: string }): Record<string, OperationDocs> {
  const example = kind === 'Site' ? { ...rule, channel_id: null } : rule
  return {
    [`list${kind}Rules`]: {
      summary: `List the rules of ${where}`,
      description: 'Every rule, in the order they run.',
      responses: { 200: envelope('Rules', [example]) },
    },
    [`create${kind}Rule`]: {
      summary: `Add a rule to ${where}`,
      description: `Adds a rule after the others. ${RULE_FIELDS}`,
      request: { map: { summary: 'Availability spellings', value: { attribute: rule.attribute, if: rule.if, then: rule.then, else: rule.else } } },
      responses: { 201: envelope('Rules', [example]), 400: failed('Unknown action', 'then[0].action: "upcase" is no action; use one of set, copy, …') },
    },
    [`get${kind}Rule`]: {
      summary: `Read a rule of ${where}`,
      description: 'One rule, with its position and the rule in words.',
      responses: { 200: envelope('Rules', [example]) },
    },
    [`update${kind}Rule`]: {
      summary: `Change a rule of ${where}`,
      description: `Changes the fields given; the others and the rule's position stay. ${RULE_FIELDS}`,
      request: { disable: { value: { enabled: false } } },
      responses: { 200: envelope('Rules', [{ ...example, enabled: false }]) },
    },
    [`delete${kind}Rule`]: {
      summary: `Delete a rule of ${where}`,
      description: 'Deletes the rule; the rules after it move up.',
      responses: { 200: { ok: { value: { success: true } } } },
    },
    [`reorder${kind}Rules`]: {
      summary: `Reorder the rules of ${where}`,
      description: 'Every rule id of the scope exactly once, in the new order: all move at once, or none (a 400 names the missing, unknown or repeated id).',
      request: { order: { value: { ids: ['12', '7', '9'] } } },
      responses: { 200: envelope('Rules', [example]) },
    },
    [`preview${kind}Rules`]: {
      summary: `Preview the rules of ${where}`,
      description: `${PREVIEW} ${extra.preview}`,
      request: { drafts: { summary: 'A draft in place of the saved rules', value: { rules: [{ attribute: rule.attribute, then: rule.then }], limit: 5 } } },
    },
  }
}

export const ruleDocs: Record<string, OperationDocs> = {
  ...scopeDocs('Site', 'a site', {
    preview: "`before` is the import stage's row, `after` the intermediate stage's, which every channel of the site reads.",
  }),
  ...scopeDocs('Channel', 'a channel', {
    preview:
      "`before` is the channel's mapped row before its rules, `after` after them; `checks` has the template's findings before " +
      'and after, `line` the feed line the next export writes for the product, byte for byte; the summary adds the readiness the ' +
      'channel would reach (`saved`: the same with the saved rules).',
  }),
}
