import { counted, isolatedName } from '../input/text-input.js'
import type { Channel } from '../db/schema.js'
import type { ChannelExportResult } from './export-channel.js'

// What an export says in words, in the run's message and in export.finished: how many products the
// channel's feed holds of those it checked, and how many its template left out, or why a safety
// stop held it.

/** "Exported 13 of 50 products through Google DE; 37 left out by its template", or the hold's message. */
export function channelExportMessage(channel: Channel, result: Pick<ChannelExportResult, 'checks' | 'counts' | 'held'>): string {
  if (result.held) return `${result.held.message}; release it with POST /platform/v2/sites/${channel.site_id}/channels/${channel.id}/release`
  const { exported, checked, leftOut } = result.checks
  const of = checked > 0 ? checked : result.counts.now
  const exportedNow = checked > 0 ? exported : result.counts.now
  const out = leftOut > 0 ? `; ${leftOut} left out by its template` : ''
  return `Exported ${exportedNow} of ${counted(of, 'product')} through ${isolatedName(channel.name)}${out}`
}
