import { lockAccountCreates, requireRoom, type AccountLimits } from '../accounts/object-limits.js'
import type { Db, DbHandle } from '../db/database.js'
import { inTransaction, type TransactionOptions } from '../db/transaction.js'
import type { Channel, ChannelDestination, ChannelExport, FeedFile, Site } from '../db/schema.js'
import { NotFoundError } from '../errors.js'
import { ANY_COLUMN, parseFilter } from '../catalog/filter.js'
import type { FeedStorage } from '../feeds/feed-storage.js'
import { isId } from '../db/ids.js'
import { getSite } from '../sites/sites.js'
import { checkSavedFilenames, guardDestinations, readChannelInput, type ChannelConfig, type ChannelInput } from './channel-input.js'
import { channelStage, IMPORT_STAGE, inStage } from '../db/stage-keys.js'
import { copyRules } from '../rules/rule-store.js'
import { intermediateColumns, siteRules } from '../rules/intermediate-stage.js'
import { settleRequestClaim } from '../activity/request-scope.js'
import { recordChannelChange } from './channel-activity.js'
import { copyDestinations, replaceDestinations, type Connectors } from './channel-destinations.js'
import { requireXmlRuleNames } from './channel-rule-names.js'

/** Where the channel's exports stand: a safety stop holds the last one, or what the last published one wrote serves, or none has. */
export type ExportStatus = 'not_exported' | 'published' | 'held'

export interface ChannelDetails {
  channel: Channel & { export_name: string }
  destinations: ChannelDestination[]
  files: FeedFile[]
  exportStatus: ExportStatus
}

function configOf(channel: Channel & { export_name: string }): ChannelConfig {
  return {
    name: channel.name,
    exportName: channel.export_name,
    active: channel.active,
    format: channel.format,
    mapping: channel.mapping,
    filter: channel.filter,
    filenames: channel.filenames,
    destinations: undefined,
    template: channel.template,
    validationMode: channel.validation_mode,
    currency: channel.currency,
    readinessThreshold: channel.readiness_threshold === null ? null : Number(channel.readiness_threshold),
    safetyMaxDrop: channel.safety_max_drop === null ? null : Number(channel.safety_max_drop),
    safetyMaxLeftOut: channel.safety_max_left_out === null ? null : Number(channel.safety_max_left_out),
    safetyMinProducts: channel.safety_min_products,
  }
}

const channelColumns = (db: DbHandle) =>
  db.selectFrom('channel as c').innerJoin('export_template as t', 't.id', 'c.template_id').selectAll('c').select('t.name as export_name')

async function details(db: DbHandle, channels: (Channel & { export_name: string })[]): Promise<ChannelDetails[]> {
  if (channels.length === 0) return []
  const ids = channels.map((c) => c.id)
  const destinations = await db.selectFrom('channel_destination').selectAll().where('channel_id', 'in', ids).orderBy('id').execute()
  const files = await db.selectFrom('feed_file').selectAll().where('channel_id', 'in', ids).orderBy('position').execute()
  return channels.map((channel) => {
    const own = files.filter((f) => f.channel_id === channel.id)
    // A published export leaves the channel its files; a held one leaves those of the last published.
    const exportStatus: ExportStatus = channel.hold !== null ? 'held' : own.length > 0 ? 'published' : 'not_exported'
    return { channel, destinations: destinations.filter((d) => d.channel_id === channel.id), files: own, exportStatus }
  })
}

export async function listChannels(db: DbHandle, accountId: string, siteSegment: string): Promise<ChannelDetails[]> {
  return channelsOfSite(db, await getSite(db, accountId, siteSegment))
}

/** The channels of a site already resolved, by id. */
export async function channelsOfSite(db: DbHandle, site: Site): Promise<ChannelDetails[]> {
  return details(db, await channelColumns(db).where('c.account_id', '=', site.account_id).where('c.site_id', '=', site.id).orderBy('c.id').execute())
}

/**
 * The channel of the site; `forUpdate`: its row locked until the transaction ends, for a change that
 * reads it and then writes it. Concurrent changes then take turns, each reading what the one before
 * wrote: without it two PUTs both answered 200 and one was lost (each wrote back the row it had
 * read), and parallel DELETEs all answered 200 and were each logged (a differential run).
 */
export async function getChannel(db: DbHandle, accountId: string, siteSegment: string, channelId: string, { forUpdate = false } = {}): Promise<ChannelDetails> {
  const site = await getSite(db, accountId, siteSegment)
  let query = channelColumns(db).where('c.account_id', '=', accountId).where('c.site_id', '=', site.id).where('c.id', '=', channelId)
  if (forUpdate) query = query.forNoKeyUpdate('c')
  const channel = isId(channelId) ? await query.executeTakeFirst() : undefined
  if (!channel) throw new NotFoundError(`Channel ${channelId} of site ${site.id} not found`)
  const [found] = await details(db, [channel])
  if (!found) throw new NotFoundError()
  return found
}

export async function channelHistory(
  db: DbHandle,
  accountId: string,
  siteSegment: string,
  channelId: string,
): Promise<{ details: ChannelDetails; history: ChannelExport[] }> {
  const found = await getChannel(db, accountId, siteSegment, channelId)
  return { details: found, history: await exportHistoryOf(db, accountId, found.channel.id) }
}

/** A channel's exports, newest first (at most 100), for a channel already found in the account. */
export function exportHistoryOf(db: DbHandle, accountId: string, channelId: string): Promise<ChannelExport[]> {
  return db
    .selectFrom('channel_export')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('channel_id', '=', channelId)
    .orderBy('id', 'desc')
    .limit(100)
    .execute()
}

/**
 * A filter is checked when it is saved, so that a bad one is a 400 now rather than a failed export
 * later: against the columns the site's import stage has, or, before its first import, for all but
 * its column names (which columns exist is the import's to say; the export checks them again).
 */
/** A filter reads the intermediate stage: the import stage's columns and those the site's rules create (any column before an import). */
async function checkFilter(db: DbHandle, site: Pick<Site, 'id' | 'account_id'>, filter: string): Promise<void> {
  if (filter.trim() === '') return
  const stage = await db
    .selectFrom('site_stage')
    .select('columns')
    .where(inStage('site_stage', site.id, IMPORT_STAGE))
    .executeTakeFirst()
  if (!stage || stage.columns.length === 0) {
    parseFilter(filter, ANY_COLUMN)
    return
  }
  parseFilter(filter, intermediateColumns(stage.columns, await siteRules(db, site)))
}

async function templateId(db: DbHandle, accountId: string, name: string): Promise<string> {
  await db
    .insertInto('export_template')
    .values({ account_id: accountId, name })
    .onConflict((oc) => oc.columns(['account_id', 'name']).doNothing())
    .execute()
  const row = await db.selectFrom('export_template').select('id').where('account_id', '=', accountId).where('name', '=', name).executeTakeFirstOrThrow()
  return row.id
}

/** The channel columns a configuration is stored in (create and update write the same ones). */
async function storedConfig(db: DbHandle, accountId: string, config: ChannelConfig) {
  return {
    template_id: await templateId(db, accountId, config.exportName),
    name: config.name,
    active: config.active,
    format: config.format,
    mapping: JSON.stringify(config.mapping),
    filter: config.filter,
    filenames: JSON.stringify(config.filenames),
    template: config.template,
    validation_mode: config.validationMode,
    currency: config.currency,
    readiness_threshold: config.readinessThreshold,
    safety_max_drop: config.safetyMaxDrop,
    safety_max_left_out: config.safetyMaxLeftOut,
    safety_min_products: config.safetyMinProducts,
  }
}

export async function createChannel(
  db: Db,
  accountId: string,
  siteSegment: string,
  input: ChannelInput,
  limits: AccountLimits,
  connectors: Connectors,
): Promise<ChannelDetails> {
  const config = readChannelInput(input)
  await guardDestinations(connectors.guard, input.destinations)
  return inTransaction(db, async (tx) => {
    const trx = tx.db
    await lockAccountCreates(trx, accountId)
    const site = await getSite(trx, accountId, siteSegment)
    await checkFilter(trx, site, config.filter)
    await requireRoom(trx, accountId, limits, { channels: 1 })
    const created = await trx
      .insertInto('channel')
      .values({ account_id: accountId, site_id: site.id, ...(await storedConfig(trx, accountId, config)) })
      .returning('id')
      .executeTakeFirstOrThrow()
    // A refusal here rolls the insert back: nothing is saved.
    checkSavedFilenames(config.filenames, { siteId: site.id, channelId: created.id })
    // Without destinations a channel gets the built-in one: its files are served at once.
    const destinations = config.destinations ?? [{ kind: 'feed', name: null, active: true, url: null, file: null }]
    await replaceDestinations(trx, { accountId, channelId: created.id }, destinations, connectors.credentials)
    const channel = await getChannel(trx, accountId, site.id, created.id)
    await recordChannelChange(trx, null, channel)
    await settleRequestClaim(tx, channel)
    return channel
  })
}

export async function updateChannel(
  db: Db,
  accountId: string,
  siteSegment: string,
  channelId: string,
  input: ChannelInput,
  connectors: Connectors,
): Promise<ChannelDetails> {
  await guardDestinations(connectors.guard, input.destinations)
  return inTransaction(db, async ({ db: trx }) => {
    const current = await getChannel(trx, accountId, siteSegment, channelId, { forUpdate: true })
    const config = readChannelInput(input, configOf(current.channel))
    checkSavedFilenames(config.filenames, { siteId: current.channel.site_id, channelId: current.channel.id })
    await checkFilter(trx, { id: current.channel.site_id, account_id: accountId }, config.filter)
    if (config.format === 'xml') await requireXmlRuleNames(trx, current.channel)
    await trx
      .updateTable('channel')
      .set({ ...(await storedConfig(trx, accountId, config)), updated_at: new Date() })
      .where('account_id', '=', accountId)
      .where('id', '=', current.channel.id)
      .execute()
    if (config.destinations) await replaceDestinations(trx, { accountId, channelId: current.channel.id }, config.destinations, connectors.credentials)
    const updated = await getChannel(trx, accountId, current.channel.site_id, current.channel.id)
    await recordChannelChange(trx, current, updated)
    return updated
  })
}

/**
 * Deletes a channel with its stage. Its feed files are removed once the commit leaves no row naming
 * them, never before (a rollback keeps them served); `onHookError` hears of a removal that failed.
 */
export async function deleteChannel(
  db: Db,
  storage: FeedStorage,
  accountId: string,
  siteSegment: string,
  channelId: string,
  { onHookError }: Pick<TransactionOptions, 'onHookError'> = {},
): Promise<void> {
  await inTransaction(
    db,
    async (tx) => {
      const trx = tx.db
      const current = await getChannel(trx, accountId, siteSegment, channelId, { forUpdate: true })
      const { site_id: siteId, id } = current.channel
      await trx
        .deleteFrom('stage_product')
        .where(inStage('stage_product', siteId, channelStage(id)))
        .execute()
      await trx
        .deleteFrom('site_stage')
        .where(inStage('site_stage', siteId, channelStage(id)))
        .execute()
      await trx.deleteFrom('channel').where('account_id', '=', accountId).where('id', '=', current.channel.id).execute()
      await recordChannelChange(trx, current, null)
      const keys = current.files.map((file) => file.storage_key)
      tx.onCommit(() => storage.remove(keys))
    },
    { onHookError },
  )
}

/** Site copy with copy_export: the channels with their destinations (new feed tokens) and rules, no files or history. */
export async function copyChannels(trx: DbHandle, accountId: string, fromSiteId: string, toSiteId: string): Promise<void> {
  const channels = await trx.selectFrom('channel').selectAll().where('account_id', '=', accountId).where('site_id', '=', fromSiteId).orderBy('id').execute()
  for (const channel of channels) {
    // A copy starts with nothing exported: no hold of the original's.
    const { id: _id, created_at: _c, updated_at: _u, hold: _h, ...rest } = channel
    const copy = await trx
      .insertInto('channel')
      .values({ ...rest, site_id: toSiteId, mapping: JSON.stringify(channel.mapping), filenames: JSON.stringify(channel.filenames) })
      .returning('id')
      .executeTakeFirstOrThrow()
    await copyRules(trx, accountId, { siteId: fromSiteId, channelId: channel.id }, { siteId: toSiteId, channelId: copy.id })
    await copyDestinations(trx, accountId, channel.id, copy.id)
  }
}
