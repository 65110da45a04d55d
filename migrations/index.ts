import type { Migration } from 'kysely'
import * as m0001 from './0001-accounts-projects-sites.js'
import * as m0002 from './0002-streams-batches.js'
import * as m0003 from './0003-imports-runs.js'
import * as m0004 from './0004-channels-exports.js'
import * as m0005 from './0005-channel-pushes.js'
import * as m0006 from './0006-stream-change-index.js'
import * as m0007 from './0007-incremental-exports.js'
import * as m0008 from './0008-rate-limit-windows.js'
import * as m0009 from './0009-feed-objects.js'
import * as m0010 from './0010-webhooks.js'
import * as m0011 from './0011-access-token-public-id.js'
import * as m0012 from './0012-console-sessions.js'
import * as m0013 from './0013-run-table.js'
import * as m0014 from './0014-channel-templates.js'
import * as m0015 from './0015-one-copy-per-stage.js'
import * as m0016 from './0016-rewrites-and-safety-stops.js'
import * as m0017 from './0017-rules.js'
import * as m0018 from './0018-activity-and-idempotency.js'
import * as m0019 from './0019-file-destinations.js'
import * as m0020 from './0020-fetched-sources.js'
import * as m0021 from './0021-window-counters.js'
import * as m0022 from './0022-lines-rendered-on-read.js'
import * as m0023 from './0023-runs-claimed-from-their-table.js'
import * as m0024 from './0024-one-claim-shape.js'
import * as m0025 from './0025-left-out-index.js'
import * as m0026 from './0026-mapped-channels-refer.js'
import * as m0027 from './0027-stage-layout.js'
import * as m0028 from './0028-forgotten-tombstones.js'

// A static list instead of a directory scan: it works the same from TypeScript sources (tsx, vitest)
// and from the compiled build, and a migration cannot be forgotten by the bundler.
export const migrations: Record<string, Migration> = {
  '0001-accounts-projects-sites': m0001,
  '0002-streams-batches': m0002,
  '0003-imports-runs': m0003,
  '0004-channels-exports': m0004,
  '0005-channel-pushes': m0005,
  '0006-stream-change-index': m0006,
  '0007-incremental-exports': m0007,
  '0008-rate-limit-windows': m0008,
  '0009-feed-objects': m0009,
  '0010-webhooks': m0010,
  '0011-access-token-public-id': m0011,
  '0012-console-sessions': m0012,
  '0013-run-table': m0013,
  '0014-channel-templates': m0014,
  '0015-one-copy-per-stage': m0015,
  '0016-rewrites-and-safety-stops': m0016,
  '0017-rules': m0017,
  '0018-activity-and-idempotency': m0018,
  '0019-file-destinations': m0019,
  '0020-fetched-sources': m0020,
  '0021-window-counters': m0021,
  '0022-lines-rendered-on-read': m0022,
  '0023-runs-claimed-from-their-table': m0023,
  '0024-one-claim-shape': m0024,
  '0025-left-out-index': m0025,
  '0026-mapped-channels-refer': m0026,
  '0027-stage-layout': m0027,
  '0028-forgotten-tombstones': m0028,
}
