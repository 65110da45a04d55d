import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import type { Site } from '../db/schema.js'
import { SiteErrorCode } from '../sites/run-failure.js'
import { addImportHistory } from '../sites/import-history.js'
import { siteErrorReporter } from '../sites/site-errors.js'
import { applyPendingBatches, type AppliedBatches } from './apply-batches.js'
import { buildImportStage, type CatalogLimits, type StageSource } from './build-stage.js'
import { IMPORT_STAGE } from '../db/stage-keys.js'
import { fetchIntoStream, type SourceFetching } from './fetched-source.js'

export interface ImportRun {
  pid: string
  /** Batches up to this sequence number were uploaded before the run started. */
  upToSeq: string
  now: () => Date
  limits: CatalogLimits
  observer?: ImportObserver
  /** How fetched sources (feed URLs, SFTP files) are fetched; without it, they keep their data and say why. */
  fetching?: SourceFetching
}

/** Whose import applied a stream's batches. */
export interface ImportedStream {
  pid: string
  accountId: string
  siteId: string
  streamId: string
}

/** Hears of the batches an import applied, once they are committed (the metrics count them, the log shows each). */
export interface ImportObserver {
  batchesApplied(batches: AppliedBatches, where: ImportedStream): void
}

/**
 * An import of a site (docs/interface.md "Process", docs/design.md 5.3): apply each active source's pending batches
 * to its stream's catalog, then build the site's import stage from the catalogs, then record the
 * import. Throws RunFailure when the site's data cannot be imported; the stage then stays as it was.
 */
export async function importSite(db: Db, site: Site, run: ImportRun): Promise<{ productCount: number }> {
  const report = siteErrorReporter(db, site, run.pid)
  const sources: StageSource[] = []
  const applied = new Set<string>()
  for (const row of await activeSources(db, site)) {
    if (row.deleted_at) {
      await report(SiteErrorCode.streamDeleted, `Stream ${row.stream_id} of data source ${row.id} was deleted; the data source was left out`, {
        data_source_id: row.id,
        stream_id: row.stream_id,
      })
      continue
    }
    sources.push({
      dataSourceId: row.id,
      streamId: row.stream_id,
      streamName: row.name,
      importType: row.import_type === 2 ? 2 : 1,
      importEmpty: row.import_empty,
      fetched: row.kind !== 'stream',
    })
    if (applied.has(row.stream_id)) continue
    applied.add(row.stream_id)
    if (row.kind !== 'stream') {
      await fetchSource(db, { site, run, report, row })
      continue
    }
    if (row.status === 'locked' || row.status === 'locked_processing') {
      await report(SiteErrorCode.streamLocked, `Stream ${row.stream_id} is ${row.status}: its new batches were not imported, its current data was`, {
        stream_id: row.stream_id,
        status: row.status,
      })
      continue
    }
    await applyStream(db, { site, run, report, streamId: row.stream_id })
  }

  const stage = await buildImportStage(db, site, sources, run.limits.stageColumns)
  await addImportHistory(db, { accountId: site.account_id, siteId: site.id, pid: run.pid, productCount: stage.rowCount, importTime: run.now() })
  await forgetSeenTombstones(db, [...applied])
  return { productCount: stage.rowCount }
}

/** The site's active data sources with their streams, in the order they stack. */
function activeSources(db: Db, site: Site) {
  return db
    .selectFrom('data_source as ds')
    .innerJoin('stream as s', 's.id', 'ds.stream_id')
    .select(['ds.id', 'ds.account_id', 'ds.stream_id', 'ds.import_type', 'ds.import_empty', 's.name', 's.status', 's.deleted_at'])
    .select(['ds.kind', 'ds.settings', 'ds.sealed_credentials', 'ds.fetch_state'])
    .where('ds.account_id', '=', site.account_id)
    .where('ds.site_id', '=', site.id)
    .where('ds.status', '=', 'active')
    .orderBy('ds.id')
    .execute()
}

type SourceRow = Awaited<ReturnType<typeof activeSources>>[number]

/**
 * A fetched source: its file fetched into its own stream (a batch when it changed), then applied at
 * once. Only its source writes to that stream, so every batch of it is this run's to apply.
 */
async function fetchSource(db: Db, { site, run, report, row }: { site: Site; run: ImportRun; report: ReturnType<typeof siteErrorReporter>; row: SourceRow }) {
  if (!run.fetching) {
    await report(SiteErrorCode.sourceFetchFailed, `Source ${row.id} was not fetched: this process fetches no sources; its previous data was kept`, {
      data_source_id: row.id,
    })
  } else {
    await fetchIntoStream(db, row, { pid: run.pid, now: run.now, report, fetching: run.fetching })
  }
  await applyStream(db, { site, run: { ...run, upToSeq: ALL_BATCHES }, report, streamId: row.stream_id })
}

// The highest sequence number a batch can have.
const ALL_BATCHES = '9223372036854775807'

/** Applies one stream's pending batches, and tells of them (the observer) and of rows that failed to parse (a site error). */
async function applyStream(
  db: Db,
  { site, run, report, streamId }: { site: Site; run: ImportRun; report: ReturnType<typeof siteErrorReporter>; streamId: string },
): Promise<void> {
  const outcome = await applyPendingBatches(db, {
    streamId,
    upToSeq: run.upToSeq,
    now: run.now(),
    maxAttributes: run.limits.attributesPerStream,
    run: { pid: run.pid, siteId: site.id },
  })
  // Counted here, as committed: the stage built next may still fail, and the batches stay applied.
  run.observer?.batchesApplied(outcome.batches, { pid: run.pid, accountId: site.account_id, siteId: site.id, streamId })
  if (outcome.failedRows > 0) {
    const message = `${outcome.failedRows} products of stream ${streamId} could not be read; see the batches' processing stage`
    await report(SiteErrorCode.rowsFailedToParse, message, { stream_id: streamId, failed_rows: outcome.failedRows })
  }
}

/**
 * A deleted product stays in its stream's catalog as a tombstone until every site stage built from
 * the stream has read past it; a site that has not built yet does a full build and needs none. A
 * site whose data source on the stream was deleted is not waited for: the stream records how far
 * it forgot (forgotten_seq), and a stage that read its changes only up to before that is built whole.
 */
async function forgetSeenTombstones(db: Db, streamIds: string[]): Promise<void> {
  for (const streamId of streamIds) {
    await sql`
      WITH forgotten AS (
        DELETE FROM stream_product
        WHERE stream_id = ${streamId} AND data IS NULL AND changed_seq <= (
          SELECT coalesce(min((ss.stream_seqs ->> ${streamId})::bigint), 9223372036854775807)
          FROM site_stage ss JOIN data_source ds ON ds.site_id = ss.site_id AND ds.stream_id = ${streamId}
          WHERE ss.stage = ${IMPORT_STAGE.stage} AND ss.stream_seqs ? ${streamId}
        )
        RETURNING changed_seq
      )
      UPDATE stream SET forgotten_seq = greatest(forgotten_seq, (SELECT max(changed_seq) FROM forgotten))
      WHERE id = ${streamId} AND EXISTS (SELECT 1 FROM forgotten)`.execute(db)
  }
}
