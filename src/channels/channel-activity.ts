import { changesBetween, urlOrigin, type Changes } from '../activity/activity-changes.js'
import { recordActivity } from '../activity/activity-store.js'
import type { DbHandle } from '../db/database.js'
import type { Channel, ChannelDestination } from '../db/schema.js'

// What the activity log keeps of a channel: its settings as a person sets them, its destinations
// without what makes them secret. A feed token is no setting (it names the URL); an http
// destination's URL carries its receiver's token in its path or query, so only its origin is kept,
// and a change of the whole URL shows as `destination_url: "changed"`, never as a value. A file
// server's settings are kept; its credentials show as `destination_credentials: "changed"`.

/** A channel with its destinations, as channels.ts reads it (its ChannelDetails). */
interface ChannelState {
  channel: Channel & { export_name: string }
  destinations: ChannelDestination[]
}

interface RecordedChannel {
  [field: string]: unknown
}

function recordedChannel({ channel, destinations }: ChannelState): { shown: RecordedChannel; urls: string; sealed: string } {
  const shown: RecordedChannel = {
    name: channel.name,
    template: channel.export_name,
    active: channel.active,
    format: channel.format,
    mapping: channel.mapping,
    filter: channel.filter,
    filenames: channel.filenames,
    validation_mode: channel.validation_mode,
    currency: channel.currency,
    readiness_threshold: channel.readiness_threshold,
    safety_max_drop: channel.safety_max_drop,
    safety_max_left_out: channel.safety_max_left_out,
    safety_min_products: channel.safety_min_products,
    destinations: destinations.map((d) => ({
      kind: d.kind,
      name: d.name,
      active: d.active,
      origin: d.url === null ? null : urlOrigin(d.url),
      ...(d.settings && { server: d.settings }),
    })),
  }
  return { shown, urls: destinations.map((d) => d.url ?? '').join('\n'), sealed: destinations.map((d) => d.sealed_credentials ?? '').join('\n') }
}

function channelChanges(before: ChannelState | null, after: ChannelState | null): Changes {
  const was = before ? recordedChannel(before) : null
  const is = after ? recordedChannel(after) : null
  const changes = changesBetween(was?.shown ?? null, is?.shown ?? null)
  if ((was?.urls ?? '') !== (is?.urls ?? '')) changes.destination_url = 'changed'
  // A file server's credentials given anew (sealed again, so any save of them shows).
  if ((was?.sealed ?? '') !== (is?.sealed ?? '')) changes.destination_credentials = 'changed'
  return changes
}

/** Records a channel's creation, change or deletion (`before` or `after` null for the first and last). */
export async function recordChannelChange(db: DbHandle, before: ChannelState | null, after: ChannelState | null): Promise<void> {
  const channel = (after ?? before)!.channel
  const changes = channelChanges(before, after)
  if (before && after && Object.keys(changes).length === 0) return
  const action = before === null ? 'channel.created' : after === null ? 'channel.deleted' : 'channel.updated'
  await recordActivity(db, { accountId: channel.account_id, action, target: { type: 'channel', id: channel.id, siteId: channel.site_id }, changes })
}
