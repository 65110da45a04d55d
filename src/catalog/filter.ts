// Product filters (docs/design.md section 5 item 6): a client's SQL condition, parsed by a real SQL parser
// into a small whitelisted tree and compiled to a Kysely condition whose literals are all parameters.
export type { CompareOp, FilterLiteral, FilterNode } from './filter-node.js'
export { ANY_COLUMN, MAX_FILTER_LENGTH, parseFilter } from './filter-parse.js'
export { filterToSql, type FilterValueOf } from './filter-compile.js'
