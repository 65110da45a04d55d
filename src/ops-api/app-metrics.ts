import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { sameSecret } from '../auth/secrets.js'
import { poolUsage, type Db } from '../db/database.js'
import type { AppliedBatches } from '../imports/apply-batches.js'
import type { RunEnd, RunObserver } from '../jobs/run-observer.js'
import { ACTIONS } from '../jobs/run-requests.js'
import { countActiveRuns } from '../runs/run-store.js'
import type { UploadResult } from '../streams/upload-result.js'
import type { UploadObserver } from '../streams/uploads.js'

/** The route label of a request no route matched: one label, whatever the URL, so that scanners cannot grow the series. */
export const UNMATCHED_ROUTE = 'unmatched'

// Requests take milliseconds, uploads of large catalogs a minute; runs take seconds to hours.
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]
const RUN_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21_600]

/**
 * The numbers an operator watches (Prometheus text format, prom-client). One registry per app, not
 * prom-client's global one: tests build many apps in one process. Counters count what happened in
 * this process; the run gauges are read from the database at each scrape and are the same in every
 * process that shares it. Uploads and runs report here through the observer interfaces their
 * layers define (UploadObserver, RunObserver), so nothing below the app imports this module.
 */
export class AppMetrics implements UploadObserver, RunObserver {
  readonly registry = new Registry()
  private readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>
  private readonly uploadRows: Counter<'outcome'>
  private readonly uploadBytes: Counter
  private readonly batches: Counter<'stage' | 'outcome'>
  private readonly runs: Counter<'action' | 'outcome'>
  private readonly runDuration: Histogram<'action' | 'outcome'>

  constructor(private readonly db: Db) {
    const registers = [this.registry]
    collectDefaultMetrics({ register: this.registry })
    this.httpDuration = new Histogram({
      name: 'catalog_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern and status code, and how long they took; _count counts them',
      labelNames: ['method', 'route', 'status_code'],
      buckets: HTTP_BUCKETS,
      registers,
    })
    this.uploadRows = new Counter({
      name: 'catalog_upload_rows_total',
      help: 'Rows of committed uploads (chunked uploads and deletes): accepted, or rejected with an error in the batch',
      labelNames: ['outcome'],
      registers,
    })
    this.uploadBytes = new Counter({ name: 'catalog_upload_bytes_total', help: 'Payload bytes (after gzip) of committed uploads', registers })
    this.batches = new Counter({
      name: 'catalog_batches_total',
      help: 'Batches by stage and outcome: at upload accepted or refused (every line failed, or an empty payload); at import processed or failed',
      labelNames: ['stage', 'outcome'],
      registers,
    })
    this.runs = new Counter({
      name: 'catalog_runs_total',
      help: 'Runs ended in this process by action and outcome (success, failed, error, interrupted, site_deleted, superseded, abandoned)',
      labelNames: ['action', 'outcome'],
      registers,
    })
    this.runDuration = new Histogram({
      name: 'catalog_run_duration_seconds',
      help: 'How long the runs executed in this process took, by action and outcome',
      labelNames: ['action', 'outcome'],
      buckets: RUN_BUCKETS,
      registers,
    })
    // Present from the start, so that a rate over them has a first sample at zero.
    for (const outcome of ['accepted', 'rejected']) this.uploadRows.inc({ outcome }, 0)
    for (const [stage, outcome] of [
      ['upload', 'accepted'],
      ['upload', 'refused'],
      ['import', 'processed'],
      ['import', 'failed'],
    ] as const) {
      this.batches.inc({ stage, outcome }, 0)
    }
    this.registerDatabaseGauges(registers)
  }

  get contentType(): string {
    return this.registry.contentType
  }

  /** The registry in the Prometheus text format; the run gauges are read from the database now. */
  render(): Promise<string> {
    return this.registry.metrics()
  }

  observeRequest(method: string, route: string, statusCode: number, seconds: number): void {
    this.httpDuration.observe({ method, route, status_code: String(statusCode) }, seconds)
  }

  uploaded({ outcome, batch }: UploadResult, bodyBytes: number): void {
    const stored = outcome === 'accepted'
    this.batches.inc({ stage: 'upload', outcome: stored && batch.status === 'uploaded' ? 'accepted' : 'refused' })
    // An empty payload stores nothing: its bytes and its one error line are no rows.
    if (!stored) return
    this.uploadRows.inc({ outcome: 'accepted' }, batch.row_count)
    this.uploadRows.inc({ outcome: 'rejected' }, batch.error_count)
    this.uploadBytes.inc(bodyBytes)
  }

  batchesApplied({ processed, failed }: AppliedBatches): void {
    this.batches.inc({ stage: 'import', outcome: 'processed' }, processed)
    this.batches.inc({ stage: 'import', outcome: 'failed' }, failed)
  }

  runEnded({ run: { action }, outcome, seconds }: RunEnd): void {
    this.runs.inc({ action, outcome })
    if (seconds !== undefined) this.runDuration.observe({ action, outcome }, seconds)
  }

  private registerDatabaseGauges(registers: Registry[]): void {
    const { db } = this
    new Gauge({
      name: 'catalog_db_pool_connections',
      help: "Connections of this process's database pool: in_use or idle",
      labelNames: ['state'],
      registers,
      collect() {
        const pool = poolUsage(db)
        if (!pool) return
        this.set({ state: 'in_use' }, pool.busy)
        this.set({ state: 'idle' }, pool.idle)
      },
    })
    new Gauge({
      name: 'catalog_db_pool_waiting',
      help: "Requests waiting for a connection of this process's database pool",
      registers,
      collect() {
        const pool = poolUsage(db)
        if (pool) this.set(pool.waiting)
      },
    })
    new Gauge({
      name: 'catalog_db_pool_max_connections',
      help: "The size of this process's database pool (DB_POOL_SIZE)",
      registers,
      collect() {
        const pool = poolUsage(db)
        if (pool) this.set(pool.size)
      },
    })
    new Gauge({
      name: 'catalog_active_runs',
      help: 'Queued and running runs of every process (read from the database at each scrape), by status and action',
      labelNames: ['status', 'action'],
      registers,
      async collect() {
        // A saturated pool would make the scrape wait behind the work it should show; without a
        // connection free the gauge is left out of this scrape (absent, rather than stale). Nor does
        // a failed query fail the scrape: the pool gauges matter most when the database is in trouble.
        const pool = poolUsage(db)
        const counts = pool && pool.waiting > 0 ? undefined : await countActiveRuns(db).catch(() => undefined)
        // Set in one go after the query, so that a concurrent scrape never reads a half-set gauge.
        this.reset()
        if (!counts) return
        for (const status of ['queued', 'running'] as const) for (const action of ACTIONS) this.set({ status, action }, 0)
        for (const { status, action, count } of counts) this.set({ status, action }, count)
      },
    })
  }
}

/** Whether a scrape may read the metrics: always without METRICS_TOKEN, else with `Authorization: Bearer <token>`. */
export function scrapeAllowed(token: string | undefined, authorization: string | undefined): boolean {
  if (token === undefined) return true
  const given = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1]
  return given !== undefined && sameSecret(given, token)
}
