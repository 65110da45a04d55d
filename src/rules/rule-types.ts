// Transformation rules: what a rule is, as it is stored and as the API shows it. Site
// rules turn the import stage into the intermediate stage; a channel's rules turn its mapped rows
// into what its template checks and its file carries. Each rule writes one attribute: when its
// condition holds, its `then` actions run on the attribute's value in order, otherwise its `else`
// actions. src/rules/rule-sql.ts says what each operator and action does.

export const OPERATORS = [
  'equals',
  'not_equals',
  'contains',
  'not_contains',
  'starts_with',
  'ends_with',
  'in',
  'not_in',
  'is_empty',
  'is_not_empty',
  'greater_than',
  'greater_or_equal',
  'less_than',
  'less_or_equal',
  'matches',
  'length_greater_than',
] as const

export type Operator = (typeof OPERATORS)[number]

/** One test of an attribute's value. */
export interface Condition {
  attribute: string
  operator: Operator
  /** What the operator compares with; none for is_empty and is_not_empty, `values` for in and not_in. */
  value?: string
  values?: string[]
  /** Text comparisons ignore case unless this is true. */
  case_sensitive?: boolean
}

/** Conditions and groups of them: all must hold, or any. A group inside a group holds conditions only. */
export type Group = { all: (Condition | Group)[] } | { any: (Condition | Group)[] }

/** A part of a concat: an attribute's value or a literal text. */
export type ConcatPart = { attribute: string } | { value: string }

export type Action =
  | { action: 'set'; value: string }
  | { action: 'copy'; from: string }
  | { action: 'append' | 'prepend'; value: string; separator?: string }
  | { action: 'concat'; parts: ConcatPart[]; separator?: string }
  | { action: 'replace'; find: string; replacement: string; case_sensitive?: boolean }
  | { action: 'map'; entries: Record<string, string>; default?: string; case_sensitive?: boolean }
  | { action: 'regex_replace'; pattern: string; replacement: string; case_sensitive?: boolean }
  | { action: 'split_take'; separator: string; from?: number; count?: number; join?: string }
  | { action: 'case'; to: 'lower' | 'upper' | 'title' | 'sentence' }
  | { action: 'trim' }
  | { action: 'strip_html' }
  | { action: 'round'; decimals?: number; mode?: 'half_up' | 'up' | 'down' }
  | { action: 'truncate'; max: number; suffix?: string }
  | { action: 'default_if_empty'; value: string }
  | { action: 'exclude' }

export type ActionName = Action['action']

export const ACTIONS: readonly ActionName[] = [
  'set',
  'copy',
  'append',
  'prepend',
  'concat',
  'replace',
  'map',
  'regex_replace',
  'split_take',
  'case',
  'trim',
  'strip_html',
  'round',
  'truncate',
  'default_if_empty',
  'exclude',
]

/** A rule as its scope's pipeline runs it: only enabled rules run, in `position` order. */
export interface RuleSpec {
  id: string
  enabled: boolean
  description: string
  /** What the actions write; null for a rule that only excludes. */
  attribute: string | null
  if: Group | null
  then: Action[]
  else: Action[]
}

/** Where rules apply: a site's (channelId null), or one of its channels'. */
export interface RuleScope {
  siteId: string
  channelId: string | null
}
