import { isolatedName } from '../input/text-input.js'
import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import type { SiteStage } from '../db/schema.js'
import { inTransaction } from '../db/transaction.js'
import { RunFailure, SiteErrorCode } from '../sites/run-failure.js'
import { keepExportedData } from './exported-data.js'
import { applyChanges, boundChangeLog, clearStage, filledColumns, rebuild, type StageSite, type StageSource, type Trx } from './stage-rows.js'
import { IMPORT_STAGE, inStage } from '../db/stage-keys.js'

export type { StageSite, StageSource } from './stage-rows.js'

/** The catalog's bounds (MAX_ATTRIBUTES_PER_STREAM, MAX_STAGE_COLUMNS), as a run applies them. */
export interface CatalogLimits {
  attributesPerStream: number
  stageColumns: number
}

export interface BuiltStage {
  rowCount: number
}

/** The site's sources by role: main sources stacked, additional sources joined sideways. */
interface StageSources {
  mains: StageSource[]
  additions: StageSource[]
}

/** What the new stage row records besides its site. */
interface StageRecord {
  columns: string[]
  rowCount: number
  recipe: string
  streamSeqs: Record<string, string>
  build: string
  changesFrom: string
}

type StreamState = { id: string; applied_seq: string; columns: string[]; forgotten_seq: string }

/**
 * Builds the site's import stage from its sources' catalogs: main sources stacked (a later source
 * wins on equal id), additional sources joined sideways on the site's id column. One transaction:
 * readers see the old stage or the new one, and a failure leaves the old one as it was. Repeatable
 * read gives one snapshot of every stream, so the change sequences recorded match the rows read.
 */
export async function buildImportStage(db: Db, site: StageSite, sources: StageSource[], maxColumns: number): Promise<BuiltStage> {
  const roles = sourcesByRole(site, sources)
  return inTransaction(
    db,
    async ({ db: trx }) => {
      const streams = await readStreams(trx, sources)
      const liveMains = await countLiveMains(trx, roles.mains)
      const recipe = recipeOf(site, roles)
      const previous = await lockImportStage(trx, site.id)
      const { rowCount, build, changesFrom } = await writeRows(trx, { site, roles, recipe, previous, liveMains, streams })
      const columns = await stageColumns(trx, { site, roles, streams, rowCount, maxColumns })
      const streamSeqs = Object.fromEntries(sources.map((source) => [source.streamId, streams.get(source.streamId)?.applied_seq ?? '0']))
      await saveImportStage(trx, site, { columns, rowCount, recipe, streamSeqs, build, changesFrom })
      return { rowCount }
    },
    { isolation: 'repeatable read' },
  )
}

/** Refuses a site without a main source before anything is read. */
function sourcesByRole(site: StageSite, sources: StageSource[]): StageSources {
  const mains = sources.filter((source) => source.importType === 1)
  const additions = sources.filter((source) => source.importType === 2)
  if (mains.length === 0) {
    throw new RunFailure(SiteErrorCode.noMainSource, 'The site has no active main data source to import from', { site_id: site.id })
  }
  return { mains, additions }
}

async function readStreams(trx: Trx, sources: StageSource[]): Promise<Map<string, StreamState>> {
  const ids = sources.map((source) => source.streamId)
  const streams = await trx.selectFrom('stream').select(['id', 'applied_seq', 'columns', 'forgotten_seq']).where('id', 'in', ids).execute()
  return new Map(streams.map((stream) => [stream.id, stream]))
}

/**
 * The main sources that have a product. An empty one stops the import (the previous data stays)
 * unless its data source allows empty imports: an empty upload is more often a mistake than a wish.
 */
async function countLiveMains(trx: Trx, mains: StageSource[]): Promise<number> {
  let live = 0
  for (const main of mains) {
    const product = await trx
      .selectFrom('stream_product')
      .select('product_id')
      .where('stream_id', '=', main.streamId)
      .where('data', 'is not', null)
      .limit(1)
      .executeTakeFirst()
    if (product) live++
    else if (!main.importEmpty) {
      const what = main.fetched ? 'fetched' : `stream ${main.streamId} "${isolatedName(main.streamName)}"`
      throw new RunFailure(
        SiteErrorCode.emptyMainSource,
        `The main data source ${main.dataSourceId} (${what}) has no products; ` +
          'the import was stopped and the previous data kept. Allow empty imports on the data source to import it empty.',
        { data_source_id: main.dataSourceId, stream_id: main.streamId },
      )
    }
  }
  return live
}

/** What the stage is built from: a different recipe than the previous build's means a full rebuild. */
function recipeOf(site: StageSite, { mains, additions }: StageSources): string {
  return `main:${mains.map((m) => m.streamId).join(',')}|add:${additions.map((a) => a.streamId).join(',')}|id:${site.id_column}`
}

/** Whether a stage of this recipe is built from the changes since its last build (one main source, no additional one). */
export function changesOnlyRecipe(recipe: string): boolean {
  return /^main:\d+\|add:\|/.test(recipe)
}

/** The previous build's row, locked: two builds of one site take turns. */
async function lockImportStage(trx: Trx, siteId: string): Promise<SiteStage | undefined> {
  return trx
    .selectFrom('site_stage')
    .selectAll()
    .where(inStage('site_stage', siteId, IMPORT_STAGE))
    .forUpdate()
    .executeTakeFirst()
}

/** What a build writes its rows from: the previous build, the sources, and their streams as read. */
interface Building {
  site: StageSite
  roles: StageSources
  recipe: string
  previous: SiteStage | undefined
  liveMains: number
  streams: Map<string, StreamState>
}

/**
 * The stage's rows under the next build number: only the changes since the previous build when a
 * single main source is read as before, else everything again.
 */
async function writeRows(
  trx: Trx,
  { site, roles, recipe, previous, liveMains, streams }: Building,
): Promise<{ rowCount: number; build: string; changesFrom: string }> {
  const { mains, additions } = roles
  const build = String(BigInt(previous?.build ?? '0') + 1n)
  const onlyMain = mains.length === 1 && additions.length === 0 ? mains[0] : undefined
  const previousSeq = onlyMain ? previous?.stream_seqs[onlyMain.streamId] : undefined
  // The deletes after previousSeq are all still tombstones, unless the stream forgot some meanwhile.
  const forgotten = BigInt((onlyMain && streams.get(onlyMain.streamId)?.forgotten_seq) ?? '0')
  if (previous && previous.recipe === recipe && onlyMain && previousSeq !== undefined && BigInt(previousSeq) >= forgotten) {
    await keepExportedData(trx, site.id, { streamId: onlyMain.streamId, sinceSeq: previousSeq })
    const rowCount = Number(previous.row_count) + (await applyChanges(trx, site, onlyMain.streamId, previousSeq, build))
    return { rowCount, build, changesFrom: await boundChangeLog(trx, site.id, rowCount, previous.changes_from, build) }
  }
  await keepExportedData(trx, site.id, 'all')
  const rowCount = liveMains === 0 ? await clearStage(trx, site) : await rebuild(trx, site, mains, additions)
  // Every row may have changed, and nothing was recorded: a channel exported from an earlier build
  // compares every row once.
  await trx.deleteFrom('stage_change').where('site_id', '=', site.id).execute()
  return { rowCount, build, changesFrom: build }
}

/** The sources' attribute names (an additional source's id excepted) that some row has a value for. */
async function stageColumns(
  trx: Trx,
  {
    site,
    roles,
    streams,
    rowCount,
    maxColumns,
  }: { site: StageSite; roles: StageSources; streams: Map<string, StreamState>; rowCount: number; maxColumns: number },
): Promise<string[]> {
  const candidates = new Set<string>()
  for (const source of [...roles.mains, ...roles.additions]) {
    for (const column of streams.get(source.streamId)?.columns ?? []) {
      if (source.importType === 2 && column === 'id') continue
      candidates.add(column)
    }
  }
  const columns = rowCount === 0 ? [] : await filledColumns(trx, site.id, [...candidates])
  // Every product read and export walks every column of the stage: several streams within their
  // own caps may still add up to more than a read or a feed file can carry. Failing here rolls the
  // new stage back; the previous one stays.
  if (columns.length > maxColumns) {
    throw new RunFailure(
      SiteErrorCode.tooManyColumns,
      `The import stage would have ${columns.length} columns, more than the limit of ${maxColumns} (MAX_STAGE_COLUMNS); ` +
        "the import was stopped and the previous data kept. Use fewer attribute names in the site's data sources.",
      { columns: columns.length, limit: maxColumns },
    )
  }
  return columns
}

async function saveImportStage(trx: Trx, site: StageSite, stage: StageRecord): Promise<void> {
  const { columns, rowCount, recipe, build, changesFrom } = stage
  const streamSeqs = JSON.stringify(stage.streamSeqs)
  const recorded = { columns, row_count: rowCount, recipe, stream_seqs: streamSeqs, build, changes_from: changesFrom }
  await trx
    .insertInto('site_stage')
    .values({ site_id: site.id, stage: IMPORT_STAGE.stage, stage_id: IMPORT_STAGE.stageId, account_id: site.account_id, ...recorded })
    .onConflict((oc) => oc.columns(['site_id', 'stage', 'stage_id']).doUpdateSet({ ...recorded, updated_at: sql`now()` }))
    .execute()
}
