import { productStageRows, type ChannelProductRow, type ProductStageRows } from '../catalog/product-stages.js'
import type { DbHandle } from '../db/database.js'
import { NotFoundError } from '../errors.js'
import { channelDiagnostics, type DiagnosticEntry } from './channel-diagnostics.js'

// One product across a site's stages with every check each channel's last export made of it
// (the console's product page): its rows (src/catalog/product-stages.ts) and, per channel
// that has a row of it, its diagnostics of every severity, the rewrites (info) included.

export interface ProductInChannel extends ChannelProductRow {
  /** The template the channel's last export checked with. */
  template: string
  checks: DiagnosticEntry[]
  /** All its checks; `checks` holds at most the asked number. */
  checksTotal: number
}

export interface ProductAcrossStages extends Omit<ProductStageRows, 'channels'> {
  channels: ProductInChannel[]
}

/** The product in each stage of the account's site; a product no stage has is not found (404). */
export async function productAcrossStages(
  db: DbHandle,
  accountId: string,
  siteSegment: string,
  productId: string,
  limits: { channels: number; checks: number },
): Promise<ProductAcrossStages> {
  const rows = await productStageRows(db, accountId, siteSegment, productId, limits.channels)
  if (rows.importRow === null && rows.channels.every((channel) => channel.row === null)) {
    throw new NotFoundError(`Product ${JSON.stringify(productId.slice(0, 200))} of site ${rows.site.id} not found in any of its stages`)
  }
  const channels = await Promise.all(
    rows.channels.map(async (entry): Promise<ProductInChannel> => {
      if (entry.row === null) return { ...entry, template: entry.channel.template, checks: [], checksTotal: 0 }
      const query = { limit: limits.checks, offset: 0, id: productId }
      const found = await channelDiagnostics(db, accountId, rows.site.id, entry.channel.id, query)
      return { ...entry, template: found.checks.template, checks: found.entries, checksTotal: found.total }
    }),
  )
  return { ...rows, channels }
}
