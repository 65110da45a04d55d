import type { FailedAuthLimit } from '../auth/failed-auth-limit.js'
import type { Config } from '../config.js'
import type { ConnectionSlots } from '../db/connection-slots.js'
import type { Db } from '../db/database.js'
import type { RateLimitStore } from '../http/rate-limit.js'
import type { SpoolBudget } from '../streams/upload-spool.js'
import type { UploadObserver } from '../streams/uploads.js'

/** What every route plugin of the stream interface is given. */
export interface StreamDeps {
  db: Db
  config: Config
  clock: () => Date
  rateLimits: RateLimitStore
  /** Failed authentications per caller address, shared with the platform interface. */
  authLimit: FailedAuthLimit
  /** Database connections for uploads, shared fairly across accounts. */
  uploadSlots: ConnectionSlots
  /** Bytes of upload bodies received and waiting to be written, per process and per account. */
  uploadSpool: SpoolBudget
  /** Hears of every committed upload (the metrics); nothing is counted without one. */
  metrics?: UploadObserver
}
