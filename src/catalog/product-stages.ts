import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'
import type { Channel, ColumnMapping, Site } from '../db/schema.js'
import { getSite } from '../sites/sites.js'
import { hasUnstorableCharacter } from '../input/text-input.js'
import { MAX_PRODUCT_ID_BYTES } from './row-rules.js'
import { IMPORT_STAGE, inStage, ofChannelRow } from '../db/stage-keys.js'
import { intermediateColumns, intermediateRows, siteRules } from '../rules/intermediate-stage.js'
import { renderedLine } from '../feeds/feed-sql.js'
import { mappedObjectText } from '../db/referred-data.js'

// One product of a site in each of its stages (the console's product page): its row in the import
// stage, in the intermediate stage (through the site's rules, when it has any), and in each channel's
// stage, with whether the channel's feed has it. The site is the account's (getSite); the rows are
// reached through it by key.

/** A stage row's attributes, with the stage's columns in their order. */
export interface ProductRow {
  data: Record<string, string>
  columns: string[]
}

export interface ChannelProductRow {
  channel: Channel
  /** Null: the channel's stage has no row of the product (its filter leaves it out, or no export took it up yet). */
  row: (ProductRow & { inFeed: boolean; line: string | null }) | null
}

export interface ProductStageRows {
  site: Site
  productId: string
  importRow: ProductRow | null
  /**
   * The product in the intermediate stage, when the site has enabled rules (without, the
   * intermediate stage is the import stage): its row through them, null when they exclude it.
   */
  intermediate: { rules: number; row: ProductRow | null } | undefined
  /** At most the asked number of channels, those with a row of the product first. */
  channels: ChannelProductRow[]
  /** The site's other channels. */
  moreChannels: number
}

/** The characters of a row's feed line read at most: a line is as long as its values. */
export const LINE_SHOWN = 4000

/** Whether `productId` can name a stored row: Postgres text holds no NUL, and ids are at most 1,000 bytes. */
function storable(productId: string): boolean {
  return productId !== '' && !hasUnstorableCharacter(productId) && Buffer.byteLength(productId) <= MAX_PRODUCT_ID_BYTES
}

export async function productStageRows(
  db: DbHandle,
  accountId: string,
  siteSegment: string,
  productId: string,
  channelLimit: number,
): Promise<ProductStageRows> {
  const site = await getSite(db, accountId, siteSegment)
  const count = await db
    .selectFrom('channel')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .where('site_id', '=', site.id)
    .executeTakeFirst()
  const channelCount = Number(count?.n ?? 0)
  if (!storable(productId)) return { site, productId, importRow: null, intermediate: undefined, channels: [], moreChannels: channelCount }
  const [importRow, channels] = await Promise.all([importStageRow(db, site, productId), channelRows(db, site, productId, channelLimit)])
  const intermediate = importRow ? await intermediateStageRow(db, site, productId, importRow) : undefined
  return { site, productId, importRow, intermediate, channels, moreChannels: channelCount - channels.length }
}

/** The product's row of the intermediate stage: its import row through the site's rules (src/rules/intermediate-stage.ts). */
async function intermediateStageRow(db: DbHandle, site: Site, productId: string, importRow: ProductRow): Promise<ProductStageRows['intermediate']> {
  const rules = await siteRules(db, site)
  if (rules.length === 0) return undefined
  const { rows } = await sql<{
    data: Record<string, string>
  }>`SELECT data FROM (${intermediateRows(site.id, rules, sql`product_id = ${productId}`)}) AS r`.execute(db)
  const data = rows[0]?.data
  return { rules: rules.length, row: data ? { data, columns: intermediateColumns(importRow.columns, rules) } : null }
}

async function importStageRow(db: DbHandle, site: Site, productId: string): Promise<ProductRow | null> {
  const row = await db
    .selectFrom('stage_product as p')
    .leftJoin('site_stage as st', (join) =>
      join.onRef('st.site_id', '=', 'p.site_id').onRef('st.stage', '=', 'p.stage').onRef('st.stage_id', '=', 'p.stage_id'),
    )
    .select(['p.data', 'st.columns'])
    .where('p.account_id', '=', site.account_id)
    .where(inStage('p', site.id, IMPORT_STAGE))
    .where('p.product_id', '=', productId)
    .executeTakeFirst()
  return row ? { data: row.data ?? {}, columns: row.columns ?? [] } : null
}

/** The site's channels with the product's row in each, those that have one first, then by id. */
async function channelRows(db: DbHandle, site: Site, productId: string, limit: number): Promise<ChannelProductRow[]> {
  const rows = await db
    .selectFrom('channel as c')
    .leftJoin('site_stage as st', (join) => join.on(ofChannelRow('st', 'c')))
    .leftJoin('stage_product as p', (join) => join.on(ofChannelRow('p', 'c')).on('p.product_id', '=', productId))
    // A clean row keeps no data: it is the import stage row's, as it is or mapped (src/db/referred-data.ts).
    .leftJoin('stage_product as i', (join) =>
      join
        .on('p.data', 'is', null)
        .on(inStage('i', site.id, IMPORT_STAGE))
        .on('i.product_id', '=', productId),
    )
    .selectAll('c')
    .select(['st.columns as stage_columns', 'st.line_format', 'st.refers_mapping', 'p.product_id as row_id', 'p.data as own_data', 'i.data as import_data'])
    .select((eb) => eb.or([eb('p.line', 'is not', null), eb('st.line_format', 'is not', null)]).as('in_feed'))
    .select(sql<string | null>`left(p.line, ${LINE_SHOWN})`.as('line'))
    .where('c.account_id', '=', site.account_id)
    .where('c.site_id', '=', site.id)
    .orderBy((eb) => eb('p.product_id', 'is', null))
    .orderBy('c.id')
    .limit(limit)
    .execute()
  const referring = rows.flatMap(({ row_id, own_data, refers_mapping, id }) =>
    row_id !== null && own_data === null && refers_mapping ? [{ channelId: id, mapping: refers_mapping }] : [],
  )
  const mapped = await mappedImportData(db, site, productId, referring)
  return rows.map(({ stage_columns, line_format, refers_mapping: _, row_id, own_data, import_data, in_feed, line, ...channel }) => {
    if (row_id === null) return { channel, row: null }
    const data = own_data ?? mapped.get(channel.id) ?? import_data ?? {}
    const columns = stage_columns ?? []
    // A stage that stores no lines: the row's line as its file writes it.
    const shown =
      line_format === null
        ? line
        : renderedLine(
            columns.map((c) => data[c] ?? ''),
            line_format,
          ).slice(0, LINE_SHOWN)
    return { channel, row: { data, columns, inFeed: Boolean(in_feed), line: shown } }
  })
}

/**
 * The data of the channel rows that refer to the product's import row through a mapping, each
 * channel's made from it in SQL as its exports make it (src/db/referred-data.ts), in one statement.
 */
async function mappedImportData(
  db: DbHandle,
  site: Site,
  productId: string,
  referring: { channelId: string; mapping: ColumnMapping[] }[],
): Promise<Map<string, Record<string, string>>> {
  if (referring.length === 0) return new Map()
  const cases = referring.map(({ channelId, mapping }) => sql`WHEN ${channelId} THEN ${sql.raw(mappedObjectText('i.data', mapping))}`)
  const { rows } = await sql<{ id: string; data: Record<string, string> }>`
    SELECT v.id, CASE v.id ${sql.join(cases, sql` `)} END AS data
    FROM unnest(${referring.map((r) => r.channelId)}::text[]) AS v(id), stage_product i
    WHERE ${inStage('i', site.id, IMPORT_STAGE)} AND i.product_id = ${productId}`.execute(db)
  return new Map(rows.map((row) => [row.id, row.data]))
}
