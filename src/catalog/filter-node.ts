// The whitelisted filter tree. parseFilter turns a client's SQL condition into this and nothing else,
// so everything filterToSql can emit is decided by these few shapes, never by the parser's tree.

/** A literal from the filter text. A number keeps its text (sign included) so no precision is lost. */
export type FilterLiteral = { type: 'string'; value: string } | { type: 'number'; value: string }

export type CompareOp = '=' | '<>' | '<' | '<=' | '>' | '>='

export type FilterNode =
  /** All items hold; no items means "no filter" (always true). */
  | { kind: 'and'; items: FilterNode[] }
  /** Any item holds; no items is always false. */
  | { kind: 'or'; items: FilterNode[] }
  | { kind: 'not'; item: FilterNode }
  | { kind: 'compare'; column: string; op: CompareOp; value: FilterLiteral }
  /** `column LIKE pattern` (Postgres LIKE: % and _ wildcards, backslash escapes). */
  | { kind: 'like'; column: string; pattern: string; negated: boolean }
  | { kind: 'in'; column: string; values: FilterLiteral[]; negated: boolean }
  /** Both bounds have the same literal type (checked by parseFilter). */
  | { kind: 'between'; column: string; low: FilterLiteral; high: FilterLiteral; negated: boolean }
  /** `IS NULL` (negated: `IS NOT NULL`): the value is empty, i.e. a missing attribute or ''. */
  | { kind: 'empty'; column: string; negated: boolean }
