import { sql, type RawBuilder } from 'kysely'

// The one owner of a stage's key. A site's stages are rows of stage_product (its products) and one
// row of site_stage (its columns and bookkeeping), both under (site_id, stage, stage_id): the import
// stage is ('import', 0), a channel's stage ('channel', <channel id>). The intermediate stage, the
// import stage through the site's rules, is stored in neither: it is the import stage read through
// them (src/rules/). Every query names a stage through these, in the query builder, in SQL text and
// in the text of a COPY alike.

export type StageKind = 'import' | 'channel'

export interface StageKey {
  stage: StageKind
  stageId: string
}

export const IMPORT_STAGE: StageKey = { stage: 'import', stageId: '0' }

/** The kind of every channel's stage: a query over all of a site's channel stages names it. */
export const CHANNEL_STAGES: StageKind = 'channel'

export function channelStage(channelId: string): StageKey {
  return { stage: CHANNEL_STAGES, stageId: channelId }
}

/** SQL: the row aliased `alias` (of stage_product or site_stage) is of the site's stage `key`. */
export function inStage(alias: string, siteId: string, key: StageKey): RawBuilder<boolean> {
  const column = (name: string) => sql.ref(`${alias}.${name}`)
  return sql<boolean>`${column('site_id')} = ${siteId} AND ${column('stage')} = ${key.stage} AND ${column('stage_id')} = ${key.stageId}`
}

/**
 * The same as text without parameters, for a COPY (which takes none): ids are written in, so only
 * digits can pass.
 */
export function inStageText(alias: string, siteId: string, key: StageKey): string {
  return `${alias}.site_id = ${digits(siteId)} AND ${alias}.stage = '${key.stage}' AND ${alias}.stage_id = ${digits(key.stageId)}`
}

/** SQL: the import stage's row of the same product as the row aliased `alias` (for a join on it). */
export function sameImportRow(importAlias: string, alias: string, siteId: string): RawBuilder<boolean> {
  return sql<boolean>`${inStage(importAlias, siteId, IMPORT_STAGE)} AND ${sql.ref(`${importAlias}.product_id`)} = ${sql.ref(`${alias}.product_id`)}`
}

function digits(id: string): string {
  if (!/^\d+$/.test(id)) throw new Error(`not an integer id: ${id}`)
  return id
}

/** SQL: the row aliased `alias` is of the stage of the channel row aliased `channelAlias` (for a join over channels). */
export function ofChannelRow(alias: string, channelAlias: string): RawBuilder<boolean> {
  const column = (table: string, name: string) => sql.ref(`${table}.${name}`)
  return sql<boolean>`${column(alias, 'site_id')} = ${column(channelAlias, 'site_id')} AND ${column(alias, 'stage')} = ${CHANNEL_STAGES}
    AND ${column(alias, 'stage_id')} = ${column(channelAlias, 'id')}`
}
