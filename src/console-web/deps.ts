import type { CredentialBox } from '../auth/credential-box.js'
import type { FailedAuthLimit } from '../auth/failed-auth-limit.js'
import type { Config } from '../config.js'
import type { ConnectionSlots } from '../db/connection-slots.js'
import type { Db } from '../db/database.js'
import type { FeedStorage } from '../feeds/feed-storage.js'
import type { RunQueue } from '../jobs/run-queue.js'
import type { OutboundGuard } from '../net/outbound-guard.js'

/** What every route plugin of the console is given. */
export interface ConsoleDeps {
  db: Db
  config: Config
  clock: () => Date
  /** Failed sign-ins count with failed authentications of the interfaces. */
  authLimit: FailedAuthLimit
  /** Runs started from the console queue here, as POST /process does. */
  runs: RunQueue
  /** Product reads of the console share the API's read slots. */
  readSlots: ConnectionSlots
  /** Where a released held export writes its feed files, as a run's export does. */
  feedStorage: FeedStorage
  /** Upload slots and spool, for the operator's view of this process. */
  health: () => Record<string, unknown>
  /** What a destination's Test connects through, as a delivery does. */
  outbound: OutboundGuard
  /** Opens the sealed credentials of file server destinations for a Test; never shown. */
  credentials: CredentialBox
}
