import type { Batch, BatchStage, ChannelExport, ChannelHold, Run, Stream, StreamStatus } from '../db/schema.js'
import type { WebhookEventType } from './event-types.js'

// The `data` of each event type: small documents of ids, counts, states and links, never product
// data. Links are paths from the root of the service (stream paths without STREAM_PREFIX); the
// delivery makes them absolute when PUBLIC_URL is set. Builders take the rows the emitting code
// already holds, so that emitting an event is one line in its transaction:
//
//   await recordEvent(tx, batch.account_id, 'batch.uploaded', batchUploadedData(batch))

type Links = Record<string, string>

/** Stage counts without the error examples (they hold raw product rows). */
export interface StageCounts {
  status: BatchStage['status']
  successCount: number
  errorCount: number
  completedAt: string
}

export interface BatchData {
  batch_id: string
  stream_id: string
  status: Batch['status']
  error_count: number
  stages: { upload: StageCounts; processing: StageCounts | null }
  links: Links
}

export interface RunData {
  pid: string
  site_id: string
  action: Run['action']
  target_id: string | null
  trigger: Run['trigger']
  status: Run['status']
  started_at: string | null
  finished_at: string | null
  links: Links
}

export type RunFailedData = RunData & { message: string; error_codes: number[] }

export interface ExportData {
  pid: string
  site_id: string
  channel_id: string
  export_id: string
  export_start: string
  export_time: string
  counts: { now: number; previous: number; new: number; modified: number; deleted: number; unchanged: number; skipped: number }
  /** What checking the products against the channel's template found (docs/design.md 11). */
  checks: ChecksData
  /** In words, as the run's message has it: "Exported 13 of 50 products through Google DE; 37 left out by its template". */
  message: string
  feed_urls: string[]
  links: Links
}

/** An export a safety stop held: what it would have published against what the channel delivers, and why (the hold's own fields). */
export interface ExportHeldData extends HoldFigures {
  pid: string
  site_id: string
  channel_id: string
  export_id: string
  checks: ChecksData
  links: Links
}

type HoldFigures = Pick<
  ChannelHold,
  'reason' | 'message' | 'products' | 'products_previous' | 'products_checked' | 'products_left_out' | 'threshold' | 'min_products'
>

export interface ChecksData {
  template: string
  products_checked: number
  products_exported: number
  products_left_out: number
  products_exported_with_warnings: number
  products_with_errors: number
  products_with_warnings: number
  readiness_score: number | null
}

/** A channel's readiness score crossed its readiness_threshold, up (`above`) or down (`below`). */
export interface ReadinessData {
  pid: string
  site_id: string
  channel_id: string
  template: string
  readiness_score: number | null
  previous_readiness_score: number | null
  readiness_threshold: number
  direction: 'above' | 'below'
  links: Links
}

export interface StreamStatusData {
  stream_id: string
  status: StreamStatus
  previous_status: StreamStatus
  links: Links
}

/** What each event type carries. */
export interface EventData {
  'batch.uploaded': BatchData
  'batch.processed': BatchData & { pid: string | null; site_id: string | null }
  'run.started': RunData
  'run.succeeded': RunData
  'run.failed': RunFailedData
  'export.finished': ExportData
  'export.held': ExportHeldData
  'stream.status_changed': StreamStatusData
  'channel.readiness_changed': ReadinessData
}

// Every event type has its data shape: adding a type without one does not compile.
export type EventDataOf<T extends WebhookEventType> = EventData[T]

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null)

function counts(stage: BatchStage | null): StageCounts | null {
  if (!stage) return null
  return { status: stage.status, successCount: stage.successCount, errorCount: stage.errorCount, completedAt: stage.completedAt }
}

function batchData(batch: Batch): BatchData {
  const stream = `/streams/${batch.stream_id}`
  return {
    batch_id: batch.id,
    stream_id: batch.stream_id,
    status: batch.status,
    error_count: batch.error_count,
    stages: { upload: counts(batch.upload_stage) as StageCounts, processing: counts(batch.processing_stage) },
    links: { batch: `${stream}/batches/${batch.id}`, stream },
  }
}

/** A batch right after its upload (status `uploaded`, or `failed` when every row failed). */
export function batchUploadedData(batch: Batch): EventData['batch.uploaded'] {
  return batchData(batch)
}

/** A batch an import applied (status `processed` or `failed`), with its stage counts and the run that applied it. */
export function batchProcessedData(batch: Batch, run?: { pid: string; siteId: string }): EventData['batch.processed'] {
  const data = batchData(batch)
  if (run) data.links.status = `/platform/v2/sites/${run.siteId}/status/${run.pid}`
  return { ...data, pid: run?.pid ?? null, site_id: run?.siteId ?? null }
}

function runData(run: Run): RunData {
  const site = `/platform/v2/sites/${run.site_id}`
  return {
    pid: run.pid,
    site_id: run.site_id,
    action: run.action,
    target_id: run.target_id,
    trigger: run.trigger,
    status: run.status,
    started_at: iso(run.started_at),
    finished_at: iso(run.finished_at),
    links: { status: `${site}/status/${run.pid}`, site, errors: `${site}/errors?pid=${run.pid}` },
  }
}

export function runStartedData(run: Run): EventData['run.started'] {
  return runData(run)
}

export function runSucceededData(run: Run): EventData['run.succeeded'] {
  return runData(run)
}

/** A failed run, with the codes of its site errors (each once, in the order given). */
export function runFailedData(run: Run, errorCodes: readonly number[] = []): EventData['run.failed'] {
  return { ...runData(run), message: run.message, error_codes: [...new Set(errorCodes)] }
}

/**
 * One channel's finished export: its history entry's counts and the feed URLs of the files it wrote
 * (absolute, or paths such as `feedUrl('', token, filename)` gives, made absolute under PUBLIC_URL).
 */
export function exportFinishedData(
  entry: ChannelExport,
  checks: ChecksData,
  { message, feedUrls = [] }: { message: string; feedUrls?: readonly string[] },
): EventData['export.finished'] {
  const site = `/platform/v2/sites/${entry.site_id}`
  const channel = `${site}/channels/${entry.channel_id}`
  return {
    pid: entry.pid,
    site_id: entry.site_id,
    channel_id: entry.channel_id,
    export_id: entry.id,
    export_start: entry.export_start.toISOString(),
    export_time: entry.export_time.toISOString(),
    counts: {
      now: Number(entry.product_count_now),
      previous: Number(entry.product_count_previous),
      new: Number(entry.product_count_new),
      modified: Number(entry.product_count_modified),
      deleted: Number(entry.product_count_deleted),
      unchanged: Number(entry.product_count_unchanged),
      skipped: Number(entry.product_count_skipped),
    },
    checks,
    message,
    feed_urls: [...feedUrls],
    links: { channel, history: `${channel}/history`, status: `${site}/status/${entry.pid}` },
  }
}

/** A held export, with its history entry (process_status held). */
export function exportHeldData(entry: ChannelExport, hold: ChannelHold, checks: ChecksData): EventData['export.held'] {
  const site = `/platform/v2/sites/${entry.site_id}`
  const channel = `${site}/channels/${entry.channel_id}`
  const { reason, message, products, products_previous, products_checked, products_left_out, threshold, min_products } = hold
  return {
    pid: entry.pid,
    site_id: entry.site_id,
    channel_id: entry.channel_id,
    export_id: entry.id,
    ...{ reason, message, products, products_previous, products_checked, products_left_out, threshold, min_products },
    checks,
    links: { channel, release: `${channel}/release`, history: `${channel}/history`, status: `${site}/status/${entry.pid}` },
  }
}

export function streamStatusChangedData(stream: Stream, previous: StreamStatus): EventData['stream.status_changed'] {
  return { stream_id: stream.id, status: stream.status, previous_status: previous, links: { stream: `/streams/${stream.id}` } }
}

/** A channel's readiness score crossing its threshold, in the export of run `pid`. */
export function readinessChangedData(
  entry: ChannelExport,
  change: Omit<ReadinessData, 'pid' | 'site_id' | 'channel_id' | 'links'>,
): EventData['channel.readiness_changed'] {
  const channel = `/platform/v2/sites/${entry.site_id}/channels/${entry.channel_id}`
  return {
    pid: entry.pid,
    site_id: entry.site_id,
    channel_id: entry.channel_id,
    ...change,
    links: { channel, summary: `${channel}/diagnostics/summary`, diagnostics: `${channel}/diagnostics` },
  }
}
