import { sql, type RawBuilder } from 'kysely'
import { RULE_LIMITS } from './rule-values.js'
import type { SqlQuoter } from '../feeds/sql-quoter.js'
import { actionSql, groupSql, templateAttributes, type RuleColumns } from './rule-sql.js'
import type { Action, Group, RuleSpec } from './rule-types.js'

// A scope's rules as SQL: one subquery level a condition or an action, in rule order, over the
// values of the attributes the rules read and write (r0, r1, …, one column each), so that a rule
// sees what the rules before it wrote and each value is computed once per row, whatever reads it.
// OFFSET 0 keeps each level a subquery of its own (flattened, a value would be computed again for
// every reference to it). The source's other columns pass through every level.

export interface PipelineSource {
  /** A complete SELECT of the rows; its `carry` columns pass through. */
  rows: RawBuilder<unknown>
  carry: string[]
  /** SQL of an attribute's value in a source row aliased `s` ('' when it has none). */
  read(attribute: string): string
}

export interface RulePipeline {
  /** SELECT of the carried columns, each attribute's final value, `excluded`, `rewritten` (a written value differs) and, tracking, each rule's steps. */
  rows: RawBuilder<unknown>
  /** The pipeline's column of an attribute (its final value). */
  column(attribute: string): string
  /** The attributes the rules write, in the order they are first written. */
  written: string[]
  /** Tracking: each enabled rule with its columns: matched, the value before it and after it. */
  steps: { rule: RuleSpec; matched: string; before: string; after: string }[]
}

/** The attributes a rule reads or writes: its own, its conditions', its actions'. */
export function ruleAttributes(rule: RuleSpec): string[] {
  const fromGroup = (group: Group): string[] =>
    ('all' in group ? group.all : group.any).flatMap((item) => ('attribute' in item ? [item.attribute] : fromGroup(item)))
  const fromAction = (action: Action): string[] => {
    if (action.action === 'copy') return [action.from]
    if (action.action === 'concat') return action.parts.flatMap((part) => ('attribute' in part ? [part.attribute] : []))
    if ('value' in action) return templateAttributes(action.value)
    return []
  }
  return [...(rule.attribute ? [rule.attribute] : []), ...(rule.if ? fromGroup(rule.if) : []), ...[...rule.then, ...rule.else].flatMap(fromAction)]
}

/** The pipeline of `rules` (the enabled ones, in their order) over `source`; `track` adds each rule's steps for a preview. */
export function rulePipeline(q: SqlQuoter, rules: RuleSpec[], source: PipelineSource, track = false): RulePipeline {
  const active = rules.filter((rule) => rule.enabled)
  const attributes = [...new Set(active.flatMap(ruleAttributes))]
  const column = (attribute: string) => `r${attributes.indexOf(attribute)}`
  const written = [
    ...new Set(active.flatMap((rule) => (rule.attribute && rule.then.concat(rule.else).some((a) => a.action !== 'exclude') ? [rule.attribute] : []))),
  ]
  const initial = attributes.map((attribute, i) => `${source.read(attribute)} AS r${i}`)
  let level = sql`SELECT ${sql.raw([...source.carry.map((c) => `s.${c}`), ...initial, 'false AS excluded'].join(', '))} FROM (${source.rows}) AS s OFFSET 0`
  // The columns every next level lists: a level replaces one of them, or adds one.
  let columns = [...source.carry, ...attributes.map((_, i) => `r${i}`), 'excluded']
  const next = (replaced: Record<string, string>, added: Record<string, string> = {}) => {
    const list = columns.map((c) => `${replaced[c] ?? `l.${c}`} AS ${c}`).concat(Object.entries(added).map(([name, value]) => `${value} AS ${name}`))
    level = sql`SELECT ${sql.raw(list.join(', '))} FROM (${level}) AS l OFFSET 0`
    columns = [...columns, ...Object.keys(added)]
  }
  // The values the rules write, as they came: `rewritten` compares with them.
  next({}, Object.fromEntries(written.map((attribute) => [`o${attributes.indexOf(attribute)}`, `l.${column(attribute)}`])))
  const read: RuleColumns = { read: (attribute) => `l.${column(attribute)}` }
  const steps: RulePipeline['steps'] = []
  active.forEach((rule, k) => {
    const target = rule.attribute === null ? undefined : column(rule.attribute)
    // A product an earlier rule excluded has left the stage: no later rule matches it.
    const matched = rule.if === null ? '(NOT l.excluded)' : `(NOT l.excluded AND ${groupSql(q, rule.if, read)})`
    // g<k>: the product was gone (excluded) before this rule: neither branch runs on it.
    next({}, { [`m${k}`]: matched, [`g${k}`]: 'l.excluded', ...(track && target ? { [`b${k}`]: `l.${target}` } : {}) })
    const apply = (actions: Action[], when: string) => {
      for (const action of actions) {
        if (action.action === 'exclude') next({ excluded: `(l.excluded OR ${when})` })
        else if (target) {
          const written = `left(coalesce(${actionSql(q, action, `l.${target}`, read)}, ''), ${RULE_LIMITS.writtenChars})`
          next({ [target]: `CASE WHEN ${when} THEN ${written} ELSE l.${target} END` })
        }
      }
    }
    apply(rule.then, `l.m${k}`)
    apply(rule.else, `NOT (l.m${k} OR l.g${k})`)
    // g<k> served this rule only: the levels after it need not carry it.
    columns = columns.filter((c) => c !== `g${k}`)
    if (track && target) next({}, { [`a${k}`]: `l.${target}` })
    steps.push({ rule, matched: `m${k}`, before: target ? `b${k}` : `''`, after: target ? `a${k}` : `''` })
  })
  const rewritten = written.length === 0 ? 'false' : written.map((attribute) => `l.${column(attribute)} <> l.o${attributes.indexOf(attribute)}`).join(' OR ')
  next({}, { rewritten: `(${rewritten})` })
  return { rows: level, column, written, steps }
}

// jsonb_build_object takes at most 100 arguments: more written attributes are built in slices.
const PAIRS_PER_CALL = 50

/**
 * SQL: the data of the pipeline's row aliased `alias` with the values the rules wrote: its own data
 * when they changed nothing, so that such a row is the row it came from.
 */
export function writtenDataSql(q: SqlQuoter, pipeline: RulePipeline, alias: string): string {
  if (pipeline.written.length === 0) return `${alias}.data`
  const pairs = pipeline.written.map((attribute) => `${q.escapeLiteral(attribute)}::text, ${alias}.${pipeline.column(attribute)}`)
  const slices: string[] = []
  for (let i = 0; i < pairs.length; i += PAIRS_PER_CALL) slices.push(`jsonb_build_object(${pairs.slice(i, i + PAIRS_PER_CALL).join(', ')})`)
  return `(CASE WHEN ${alias}.rewritten THEN ${alias}.data || ${slices.join(' || ')} ELSE ${alias}.data END)`
}
