import type { DbHandle } from '../db/database.js'
import { siteSummaries, type SiteSummary } from '../sites/site-overview.js'
import { streamSummaries, type StreamSummary } from '../streams/stream-overview.js'
import { channelStatesOfAccount, type ChannelStates } from './channel-states.js'

// Here rather than in sites/ or streams/: the overview shows channels too, and channels/ builds on both.

/** What the console's overview shows of an account: its sites, the channels that need attention first, its streams. */
export interface AccountOverview {
  sites: SiteSummary[]
  channels: ChannelStates
  streams: StreamSummary[]
}

/** The account's overview; at most `channelsShown` channels (an account may have thousands), held first. */
export async function accountOverview(db: DbHandle, accountId: string, { channelsShown }: { channelsShown: number }): Promise<AccountOverview> {
  const [sites, channels, streams] = await Promise.all([
    siteSummaries(db, accountId),
    channelStatesOfAccount(db, accountId, channelsShown),
    streamSummaries(db, accountId),
  ])
  return { sites, channels, streams }
}
