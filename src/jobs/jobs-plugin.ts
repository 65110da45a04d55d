import type { SourceFetching } from '../imports/fetched-source.js'
import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import type { Db } from '../db/database.js'
import type { FeedStorage } from '../feeds/feed-storage.js'
import type { OutboundGuard } from '../net/outbound-guard.js'
import type { CredentialBox } from '../auth/credential-box.js'
import { runCleanup } from './cleanup.js'
import { createPushWorker, pushWorkerOptions } from './push-worker.js'
import { Repeating } from './repeating.js'
import { RunLog } from './run-log.js'
import { allRunObservers, type RunObserver } from './run-observer.js'
import { RunWorker } from './run-worker.js'
import { runSchedulerTick, type SchedulerSettings } from './scheduler.js'
import { createDeliveryWorker, deliveryWorkerOptions } from './webhook-delivery-worker.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Executes this process's share of site runs; the graceful close stops it, tests reach the queue and the sweep through it. */
    runWorker: RunWorker
  }
}

export interface JobsOptions {
  db: Db
  config: Config
  /** The time as the app sees it: a run's `now`, the scheduler's. */
  clock: () => Date
  /** Where exported feed files are kept. */
  feedStorage: FeedStorage
  /** The guard of outbound requests, for pushes to http destinations. */
  outbound: OutboundGuard
  /** Opens file servers' sealed credentials for their pushes. */
  credentials: CredentialBox
  /** Hears how runs end (the metrics); the run log (RunLog, on the app's logger) hears the same events. */
  metrics?: RunObserver
}

// Hourly cleanup, by every server process (every step is idempotent; runCleanup in cleanup.ts lists
// them): streams deleted 7 days ago, the rows of batches applied by a version whose imports did not
// release them, the stage rows of deleted sites, pushes ended a week ago, feed objects removed an hour
// ago or left unpublished by a writer that died, webhook history past its window, expired console sessions.
export const CLEANUP_INTERVAL_MS = 60 * 60 * 1000

/**
 * All background work of a server process, five parts: the run worker (with its stale-run sweep),
 * the push worker and the webhook delivery worker (each claims through a LeasedClaimWorker), the scheduler and the
 * hourly cleanup. Each coordinates through Postgres, so every process runs all of them, but for the
 * ones its settings turn off: RUN_CONCURRENCY=0 executes no runs (nor sweeps), PUSH_CONCURRENCY=0 and
 * WEBHOOK_CONCURRENCY=0 send nothing, SCHEDULER_INTERVAL_SECONDS=0 starts no scheduler. They start once
 * the app is ready and stop when it closes: the scheduler and the cleanup first, then the two senders,
 * the run worker last. Wrapped with fastify-plugin so that `app.runWorker` is decorated on the app
 * itself, not in a child scope.
 */
export const jobsPlugin = fp<JobsOptions>(
  async (app, { db, config, clock, feedStorage, outbound, credentials, metrics }) => {
    // Runs execute in every server process (RUN_CONCURRENCY at a time; none at 0); claims from the run
    // table in Postgres make sure each run executes once, whichever process takes it.
    const worker = new RunWorker(
      db,
      {
        concurrency: config.RUN_CONCURRENCY,
        pollingSeconds: config.RUN_POLL_SECONDS,
        heartbeatSeconds: config.RUN_HEARTBEAT_SECONDS,
        staleSeconds: config.RUN_STALE_SECONDS,
        timeoutSeconds: config.RUN_TIMEOUT_SECONDS,
        now: clock,
        feedStorage,
        limits: { attributesPerStream: config.MAX_ATTRIBUTES_PER_STREAM, stageColumns: config.MAX_STAGE_COLUMNS, feedMaxBytes: config.FEED_MAX_BYTES },
        accountConcurrency: config.RUN_ACCOUNT_CONCURRENCY,
        observer: allRunObservers(metrics, new RunLog(app.log)),
        fetching: sourceFetchingOf(config, { guard: outbound, credentials }),
      },
      app.log,
    )
    app.decorate('runWorker', worker)
    // Exported files reach http destinations through a worker of their own, after the run: a slow
    // destination holds a push slot of its account, never a run slot, nor another account's push.
    const pushes = createPushWorker(db, pushWorkerOptions(config, { feedStorage, guard: outbound, credentials }), app.log)
    // Webhook deliveries: a worker of their own, with per-account slots, like the pushes.
    const webhooks = createDeliveryWorker(db, deliveryWorkerOptions(config, outbound), app.log)
    const settings: SchedulerSettings = {
      defaultTimeZone: config.DEFAULT_TZ,
      limits: { maxLines: config.MAX_SCHEDULE_LINES, maxChars: config.MAX_SCHEDULE_CHARS },
      log: app.log,
    }
    const scheduler =
      config.SCHEDULER_INTERVAL_SECONDS > 0
        ? new Repeating(
            config.SCHEDULER_INTERVAL_SECONDS * 1000,
            () => runSchedulerTick(db, worker.queue, settings, clock()),
            (error) => app.log.warn({ err: error }, 'scheduler tick failed'),
          )
        : undefined
    const cleanup = new Repeating(
      CLEANUP_INTERVAL_MS,
      () =>
        runCleanup(db, {
          now: clock(),
          webhookWindowSeconds: Math.round(config.WEBHOOK_RETRY_HOURS * 3600),
          activityRetentionDays: config.ACTIVITY_RETENTION_DAYS,
          idempotencyTtlHours: config.IDEMPOTENCY_TTL_HOURS,
          feedStorage,
        }),
      (error) => app.log.warn({ err: error }, 'hourly cleanup failed'),
    )

    app.addHook('onReady', async () => {
      // Touches no database: with it out of reach the app still comes up (its health check says
      // 503), and each worker's next poll tries again.
      worker.start()
      pushes.start()
      webhooks.start()
      scheduler?.start()
      cleanup.start()
    })
    app.addHook('onClose', async () => {
      await Promise.all([scheduler?.stop(), cleanup.stop()])
      await Promise.all([pushes.stop(), webhooks.stop()])
      await worker.stop()
    })
  },
  { name: 'jobs', fastify: '5.x' },
)

/** The bounds of a fetched source's import, from the configuration. */
function sourceFetchingOf(config: Config, { guard, credentials }: Pick<SourceFetching, 'guard' | 'credentials'>): SourceFetching {
  return {
    guard,
    credentials,
    limits: {
      maxBytes: config.SOURCE_MAX_BYTES,
      maxUnpackedBytes: config.SOURCE_MAX_UNPACKED_BYTES,
      maxProducts: config.SOURCE_MAX_PRODUCTS,
      timeoutSeconds: config.SOURCE_FETCH_TIMEOUT_SECONDS,
      idleSeconds: config.SOURCE_IDLE_SECONDS,
      maxColumns: config.MAX_ATTRIBUTES_PER_STREAM,
    },
  }
}
