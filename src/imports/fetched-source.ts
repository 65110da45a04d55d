import { sql } from 'kysely'
import type { CredentialBox } from '../auth/credential-box.js'
import { MAX_LINE_BYTES } from '../catalog/row-rules.js'
import type { Db } from '../db/database.js'
import type { DataSource, SourceCredentials, SourceFetchReport, SourceFetchState } from '../db/schema.js'
import type { OutboundGuard } from '../net/outbound-guard.js'
import { SiteErrorCode } from '../sites/run-failure.js'
import type { siteErrorReporter } from '../sites/site-errors.js'
import { saveSourceBatch, type SourceBatch } from '../sources/source-batch.js'
import { fetchSourceFile, SourceFetchError, type FetchBudget } from '../sources/source-fetch.js'
import { SourceFormatError } from '../sources/source-parsers.js'

// The first step of a fetched source's import: fetch the file and, when it changed, make
// it a `replace` batch of the source's stream, which the import then applies like any stream's
// batches. Whatever fails (refused, too large, too slow, unreachable, unreadable) is a site error
// and leaves the source's data as it was.

/** What a run needs to fetch sources: the outbound guard, the key of their credentials, their bounds. */
export interface SourceFetching {
  guard: OutboundGuard
  credentials: CredentialBox
  limits: {
    maxBytes: number
    maxUnpackedBytes: number
    maxProducts: number
    timeoutSeconds: number
    idleSeconds: number
    /** MAX_ATTRIBUTES_PER_STREAM: a file's distinct column names. */
    maxColumns: number
  }
}

export interface SourceFetchRun {
  pid: string
  now: () => Date
  report: ReturnType<typeof siteErrorReporter>
  fetching: SourceFetching
}

type FetchedRow = Pick<DataSource, 'id' | 'account_id' | 'stream_id' | 'settings' | 'sealed_credentials' | 'fetch_state' | 'import_empty'>

/** Fetches one source into its stream; records what happened on the source, and on the site's errors when it failed or refused rows. */
export async function fetchIntoStream(db: Db, source: FetchedRow, run: SourceFetchRun): Promise<void> {
  const started = run.now()
  const clockStart = Date.now()
  const report = (fields: Partial<SourceFetchReport>): SourceFetchReport => ({
    outcome: 'failed',
    pid: run.pid,
    started_at: started.toISOString(),
    duration_ms: Date.now() - clockStart,
    bytes: null,
    batch_id: null,
    products: null,
    refused_rows: null,
    errors: [],
    error: null,
    ...fields,
  })
  try {
    const outcome = await fetchAndSave(db, source, run)
    if (outcome === 'unchanged') return await recordFetch(db, source, report({ outcome: 'unchanged' }))
    const { batch, bytes, state } = outcome
    await recordFetch(
      db,
      source,
      report({ outcome: 'imported', bytes, batch_id: batch.batchId ?? null, products: batch.products, refused_rows: batch.refused, errors: batch.errors }),
      state,
    )
    if (batch.refused > 0) {
      const first = batch.errors[0]
      const which = first ? `, first: "${first.message}" on line ${first.lines[0]}` : ''
      const total = batch.products + batch.refused
      const message = `${batch.refused} of the ${total} records of source ${source.id} were refused${which}; see the source's last_fetch`
      await run.report(SiteErrorCode.sourceRowsRefused, message, { data_source_id: source.id, refused_rows: batch.refused })
    }
  } catch (error) {
    const failure = sourceFailure(error)
    if (!failure) throw error
    await recordFetch(db, source, report({ error: failure.message, ...(failure instanceof EmptyFileError && failure.counts) }))
    await run.report(SiteErrorCode.sourceFetchFailed, `Source ${source.id} could not be imported: ${failure.message}; its previous data was kept`, {
      data_source_id: source.id,
    })
  }
}

/**
 * The failure of this source alone, or undefined for one of the run (the database's, which a retry
 * of the run may not meet). A reader's own fault on a tenant's file (a TypeError, a RangeError) fails
 * the source too: the run would only meet it again at every retry.
 */
function sourceFailure(error: unknown): Error | undefined {
  if (error instanceof SourceFetchError || error instanceof SourceFormatError || error instanceof EmptyFileError) return error
  if (error instanceof TypeError || error instanceof RangeError) return new Error(`the file could not be read (a ${error.name} in the platform's reader)`)
  return undefined
}

class EmptyFileError extends Error {
  constructor(readonly counts: Pick<SourceFetchReport, 'products' | 'refused_rows' | 'errors'>) {
    const refused = counts.refused_rows ? ` (${counts.refused_rows} records were refused, first: "${counts.errors[0]?.message}")` : ''
    super(`the file holds no product${refused}; an empty file replaces the data only when the source says import_empty`)
  }
}

async function fetchAndSave(
  db: Db,
  source: FetchedRow,
  run: SourceFetchRun,
): Promise<'unchanged' | { batch: SourceBatch; bytes: number; state: SourceFetchState }> {
  const { limits, guard } = run.fetching
  if (!source.settings) throw new SourceFetchError('the source has no settings')
  const budget: FetchBudget = {
    maxBytes: limits.maxBytes,
    deadline: Date.now() + limits.timeoutSeconds * 1000,
    limitSeconds: limits.timeoutSeconds,
    idleMs: limits.idleSeconds * 1000,
  }
  const credentials = openCredentials(source, run.fetching.credentials)
  const fetched = await fetchSourceFile({ settings: source.settings, credentials, state: source.fetch_state, guard, budget })
  if (fetched.unchanged) return 'unchanged'
  const { file } = fetched
  try {
    // The same bytes as the file last read: nothing to read again, whatever the server's validators said.
    if (file.sha256 === source.fetch_state?.sha256) {
      await recordState(db, source, file.state)
      return 'unchanged'
    }
    const batch = await saveSourceBatch(db, {
      source: { id: source.id, accountId: source.account_id, settings: source.settings, sealedCredentials: source.sealed_credentials },
      stream: { id: source.stream_id, accountId: source.account_id },
      file: { path: file.path, charset: file.charset },
      format: source.settings,
      limits: { maxLineBytes: MAX_LINE_BYTES, maxColumns: limits.maxColumns, maxRows: limits.maxProducts, maxUnpackedBytes: limits.maxUnpackedBytes },
      budget,
      now: run.now,
      keepEmpty: source.import_empty,
    })
    if (batch.batchId === undefined) throw new EmptyFileError({ products: 0, refused_rows: batch.refused, errors: batch.errors })
    return { batch, bytes: file.bytes, state: file.state }
  } finally {
    await file.remove()
  }
}

function openCredentials(source: FetchedRow, box: CredentialBox): SourceCredentials {
  if (!source.sealed_credentials) return {}
  try {
    return JSON.parse(box.open(source.sealed_credentials)) as SourceCredentials
  } catch (error) {
    throw new SourceFetchError(`the source's credentials could not be opened (${(error as Error).message}); save them again`)
  }
}

/**
 * Records what the fetch found; what tells an unchanged file only while the source is still as the
 * fetch read it (a change saved meanwhile makes the next import read the file again).
 */
async function recordFetch(db: Db, source: FetchedRow, report: SourceFetchReport, state?: SourceFetchState): Promise<void> {
  await db
    .updateTable('data_source')
    .set({ last_fetch: JSON.stringify(report) })
    .where('account_id', '=', source.account_id)
    .where('id', '=', source.id)
    .execute()
  if (state) await recordState(db, source, state)
}

async function recordState(db: Db, source: FetchedRow, state: SourceFetchState): Promise<void> {
  await db
    .updateTable('data_source')
    .set({ fetch_state: JSON.stringify(state) })
    .where('account_id', '=', source.account_id)
    .where('id', '=', source.id)
    .where(sql<boolean>`settings = ${JSON.stringify(source.settings)}::jsonb`)
    .where(sql<boolean>`sealed_credentials IS NOT DISTINCT FROM ${source.sealed_credentials}`)
    .execute()
}
