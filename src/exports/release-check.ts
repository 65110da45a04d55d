import type { DbHandle } from '../db/database.js'
import type { Channel, ChannelHold } from '../db/schema.js'
import { ConflictError } from '../errors.js'
import { currentHold, type ImportStage } from './export-store.js'

// A held export is released as it was computed: its run's pid and start, and what it was made
// from (the import stage's build, the channel's settings as the plan's signature) unchanged. The
// export recomputes it under the channel's export lock; anything that changed since the hold means
// another export, which the client must ask for.

export async function checkRelease(
  db: DbHandle,
  { channel, release, importStage, signature }: { channel: Channel; release: ChannelHold; importStage: ImportStage | undefined; signature: string },
): Promise<void> {
  const hold = await currentHold(db, channel)
  if (hold === null || hold.pid !== release.pid) {
    throw new ConflictError(`Channel ${channel.id} has no held export of run ${release.pid} any more: another export ended or replaced the hold`)
  }
  const stale =
    (importStage?.build ?? '0') !== hold.build
      ? "the site's import stage was built again"
      : signature !== hold.signature
        ? "the channel's settings or the import stage's columns changed"
        : undefined
  if (stale) {
    throw new ConflictError(
      `Channel ${channel.id}'s held export of run ${hold.pid} cannot be released as computed: ${stale} since. Export the channel again (action channel)`,
    )
  }
}
