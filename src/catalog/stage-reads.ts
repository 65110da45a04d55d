import { sql } from 'kysely'
import { SlotsFullError, type ConnectionSlots } from '../db/connection-slots.js'
import type { Db, DbHandle } from '../db/database.js'
import { jsonbObject } from '../db/json-object.js'
import { BadRequestError, NotFoundError, TooManyReadsError } from '../errors.js'
import { isId } from '../db/ids.js'
import { getSite } from '../sites/sites.js'
import { filterToSql, parseFilter } from './filter.js'
import type { FilterNode } from './filter-node.js'
import { excludes, intermediateColumns, intermediateCount, intermediateRows, siteRules } from '../rules/intermediate-stage.js'
import type { RuleSpec } from '../rules/rule-types.js'
import { readPageRows } from './stage-page.js'
import { channelStage, IMPORT_STAGE, inStage, sameImportRow, type StageKey } from '../db/stage-keys.js'
import { referralOf, stageRowDataText, type Referral } from '../db/referred-data.js'

/** Columns whose names start with this are hidden unless the reader asks for them (docs/design.md 5.4). */
export const HIDDEN_PREFIX = '___'

export interface StageRef {
  /** `import`, its alias `intermediate`, or `channel`. */
  name: string
  /** The channel id for `channel`; 0 or absent for the import stage. */
  id: string | undefined
}

export interface StageQuery {
  limit: number
  offset: number
  /** Column names in the order asked; empty for every visible column. */
  fields: string[]
  hidden: boolean
  filter: string | undefined
}

interface ResolvedStage {
  siteId: string
  key: StageKey
  columns: string[]
  rowCount: number
  /** The intermediate stage: the site's enabled rules its rows are read through (none: the import stage's rows as they are). */
  rules: RuleSpec[]
  /** A channel stage whose rows store no line: every one of them is in its feed (ExportPlan.linesOnRead). */
  linesOnRead: boolean
  /** A channel stage whose clean rows refer to the import stage's: how their data is made from it. */
  referral: Referral | undefined
}

const IMPORT_STAGE_NAMES = new Set(['import', 'intermediate', 'intermediate_preview'])
const INTERMEDIATE_STAGE_NAMES = new Set(['intermediate', 'intermediate_preview'])
const CHANNEL_STAGE_NAMES = new Set(['channel', 'channel_preview', 'export', 'export_preview'])

async function resolveStage(db: DbHandle, accountId: string, siteSegment: string, ref: StageRef): Promise<ResolvedStage> {
  const site = await getSite(db, accountId, siteSegment)
  const name = ref.name.toLowerCase()
  let key: StageKey
  // The PHP client also names `*_preview` stages and `export`: a preview here is the stage itself
  // (every read is paged), and an export's data is its channel's stage. The intermediate stage is
  // the import stage read through the site's rules (src/rules/intermediate-stage.ts).
  if (IMPORT_STAGE_NAMES.has(name)) {
    if (ref.id !== undefined && ref.id !== '' && ref.id !== '0') {
      // The id of a stage is no product id: `/stage/intermediate/SKU1` names a stage that does not exist.
      throw new NotFoundError(`The ${ref.name} stage has no id ${ref.id.slice(0, 100)}; leave it out or use 0 (a product is read with filter=id = '…')`)
    }
    key = IMPORT_STAGE
  } else if (CHANNEL_STAGE_NAMES.has(name)) {
    const channel =
      ref.id !== undefined && isId(ref.id)
        ? await db
            .selectFrom('channel')
            .select('id')
            .where('account_id', '=', accountId)
            .where('site_id', '=', site.id)
            .where('id', '=', ref.id)
            .executeTakeFirst()
        : undefined
    if (!channel) throw new NotFoundError(`Channel ${ref.id ?? '(none given)'} of site ${site.id} not found`)
    key = channelStage(channel.id)
  } else {
    throw new NotFoundError(`Unknown stage "${ref.name}": use import (or intermediate) or channel`)
  }
  const saved = await db
    .selectFrom('site_stage')
    .select(['columns', 'row_count', 'line_format', 'refers_to_import', 'refers_mapping'])
    .where('account_id', '=', accountId)
    .where(inStage('site_stage', site.id, key))
    .executeTakeFirst()
  const rules = INTERMEDIATE_STAGE_NAMES.has(name) ? await siteRules(db, site) : []
  const columns = intermediateColumns(saved?.columns ?? [], rules)
  return {
    siteId: site.id,
    key,
    columns,
    rowCount: Number(saved?.row_count ?? 0),
    rules,
    linesOnRead: (saved?.line_format ?? null) !== null,
    referral: saved && key.stage === 'channel' ? referralOf(saved) : undefined,
  }
}

function visibleColumns(columns: string[], hidden: boolean): string[] {
  return hidden ? columns : columns.filter((column) => !column.startsWith(HIDDEN_PREFIX))
}

/** The stage's columns (hidden ones only when asked) and its row count. */
export async function stageProperties(db: DbHandle, accountId: string, siteSegment: string, ref: StageRef, hidden: boolean) {
  const stage = await resolveStage(db, accountId, siteSegment, ref)
  const products = excludes(stage.rules) ? await intermediateCount(db, stage.siteId, stage.rules) : stage.rowCount
  return { columns: visibleColumns(stage.columns, hidden), products }
}

/**
 * A page of a stage's rows in stage order (the product id order of the primary key, so that paging
 * returns every row once), each with every asked column, '' where the row has no value, as one JSON
 * text per row.
 *
 * The page is read in slices and written out row by row, so that neither a wide stage nor large
 * values hold more than one slice in memory; a page whose text would pass `maxBytes` is refused
 * with a 400 that says what to ask instead, before anything is sent.
 */
export async function readStagePage(db: Db, accountId: string, siteSegment: string, ref: StageRef, query: StageQuery, budget: ReadBudget): Promise<string[]> {
  const stage = await resolveStage(db, accountId, siteSegment, ref)
  const visible = visibleColumns(stage.columns, query.hidden)
  for (const field of query.fields) {
    if (!visible.includes(field)) {
      const why = field.startsWith(HIDDEN_PREFIX) && stage.columns.includes(field) ? ' (a hidden column: add hidden=1)' : ''
      throw new BadRequestError(`fields: unknown column "${field}"${why}; the stage has ${columnList(visible)}`)
    }
  }
  // A column asked twice is one member of the row, where its first mention puts it.
  const output = query.fields.length > 0 ? [...new Set(query.fields)] : visible
  const condition = query.filter !== undefined && query.filter.trim() !== '' ? parseFilter(query.filter, query.hidden ? stage.columns : visible) : undefined
  // A clean row of a channel refers to the import stage's row of the same id for its data
  // (src/db/referred-data.ts): looked up by key, for the page's rows only.
  const refers = stage.referral !== undefined
  const rowData = sql.raw(stageRowDataText('c', 'i', stage.referral))
  // Only the asked fields leave Postgres: a row of a few MB read for its id costs a few bytes.
  const data = query.fields.length > 0 ? jsonbObject(query.fields.map((field) => [sql`${field}::text`, sql`${rowData} -> ${field}`])) : rowData
  const pageRows = (handle: DbHandle, after: string | undefined, limit: number) => {
    if (stage.rules.length > 0)
      return intermediatePage({ siteId: stage.siteId, rules: stage.rules, fields: query.fields, condition, offset: query.offset }, after, limit)
    let rows = handle
      .selectFrom('stage_product as c')
      .leftJoinLateral(
        (eb) =>
          eb
            .selectFrom('stage_product as i')
            .select('i.data')
            .where(sql<boolean>`${sql.raw(refers ? 'true' : 'false')} AND c.data IS NULL`)
            .where(sameImportRow('i', 'c', stage.siteId))
            .limit(1)
            .as('i'),
        (join) => join.onTrue(),
      )
      .select(['c.product_id', data.as('data')])
      .where(inStage('c', stage.siteId, stage.key))
    // A channel's data is its feed's: rows its template's checks left out have no line (diagnostics list them).
    if (stage.key.stage === 'channel' && !stage.linesOnRead) rows = rows.where('c.line', 'is not', null)
    if (condition) rows = rows.where(filterToSql(condition, (column) => sql<string>`coalesce(${rowData} ->> ${column}, '')`))
    rows = after === undefined ? rows.offset(query.offset) : rows.where('c.product_id', '>', after)
    return rows.orderBy('c.product_id').limit(limit)
  }
  const signal = AbortSignal.timeout(budget.timeoutMs)
  return budget.slots
    .run(accountId, signal, () => readPageRows(db, pageRows, { columns: output, limit: query.limit, maxBytes: budget.maxBytes, timeoutMs: budget.timeoutMs }))
    .catch((error: unknown) => {
      throw error instanceof SlotsFullError ? new TooManyReadsError(error.inFlight) : error
    })
}

/** A page of the intermediate stage's rows (see readStagePage): the import stage's, through the site's rules, in product id order. */
function intermediatePage(
  page: { siteId: string; rules: RuleSpec[]; fields: string[]; condition: FilterNode | undefined; offset: number },
  after: string | undefined,
  limit: number,
) {
  const rows = intermediateRows(page.siteId, page.rules, after === undefined ? sql`true` : sql`product_id > ${after}`, { ordered: true })
  const data = page.fields.length > 0 ? jsonbObject(page.fields.map((field) => [sql`${field}::text`, sql`c.data -> ${field}`])) : sql`c.data`
  const where = page.condition ? filterToSql(page.condition, (column) => sql<string>`coalesce(c.data ->> ${column}, '')`) : sql`true`
  // The rows come in product id order from the import stage's index, and every level of the rules
  // keeps their order (a projection and a filter each): an ORDER BY here would sort the whole stage
  // before the LIMIT, as Postgres does not carry the order up through the levels (a page of 100 of a
  // 300,000-row stage through three rules: 986 ms sorted, 0.6 ms in the order they come, measured).
  return sql`SELECT c.product_id, ${data} AS data FROM (${rows} OFFSET 0) AS c WHERE ${where}
    OFFSET ${after === undefined ? page.offset : 0} LIMIT ${limit}`
}

/** What one product read may use (PRODUCT_READ_MAX_BYTES, PRODUCT_READ_TIMEOUT_MS, READS_PER_ACCOUNT). */
export interface ReadBudget {
  maxBytes: number
  timeoutMs: number
  slots: ConnectionSlots
}

/** A stage's columns for a message: the first few, and how many more. */
function columnList(columns: string[]): string {
  if (columns.length === 0) return 'no columns'
  return columns.length <= 50 ? columns.join(', ') : `${columns.slice(0, 50).join(', ')} and ${columns.length - 50} more`
}
