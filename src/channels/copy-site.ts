import { copySiteSources } from '../sites/site-sources.js'
import { sql } from 'kysely'
import { lockAccountCreates, requireRoom, type AccountLimits } from '../accounts/object-limits.js'
import type { Db, DbHandle } from '../db/database.js'
import { bodyId, isId } from '../db/ids.js'
import type { Site } from '../db/schema.js'
import { inTransaction } from '../db/transaction.js'
import { BadRequestError } from '../errors.js'
import { readText } from '../input/text-input.js'
import { getSite, requireAccountProject, siteTarget } from '../sites/sites.js'
import { changesBetween } from '../activity/activity-changes.js'
import { recordActivity } from '../activity/activity-store.js'
import { settleRequestClaim } from '../activity/request-scope.js'
import { copyChannels } from './channels.js'
import { copyRules } from '../rules/rule-store.js'

// A site copy takes the site's channels along (copy_export), and every channel function reads its
// site: the copy lives with the channels, above the sites, so that sites never import channels.

export interface CopyInput {
  site_name?: string | null
  project_id?: string | number | null
  copy_export?: boolean | null
  copy_schedule_and_trigger?: boolean | null
  copy_shared_setting?: boolean | null
}

export interface SiteCopy {
  accountId: string
  /** The source site's id or reference. */
  segment: string
  input: CopyInput
  limits: AccountLimits
}

/** The new site's own fields, checked. */
interface CopyTarget {
  title: string
  projectId: string
}

/**
 * Copies a site's configuration into a new site. Always copied: tags (not the reference, which is
 * unique), id_column and status. `copy_schedule_and_trigger` adds the import schedule,
 * `copy_shared_setting` the data sources and the site's rules (the data flow), `copy_export` the channels
 * with their rules.
 */
export function copySite(db: Db, { accountId, segment, input, limits }: SiteCopy): Promise<Site> {
  return inTransaction(db, async (tx) => {
    const trx = tx.db
    await lockAccountCreates(trx, accountId)
    const source = await getSite(trx, accountId, segment)
    const target = await readCopyTarget(trx, accountId, source, input)
    // Everything the copy adds is counted before anything is written; over a limit, nothing is.
    await requireRoom(trx, accountId, limits, {
      sites: 1,
      tags: await countOfSite(trx, 'site_tag', accountId, source.id, true),
      dataSources: input.copy_shared_setting ? await countOfSite(trx, 'data_source', accountId, source.id) : 0,
      channels: input.copy_export ? await countOfSite(trx, 'channel', accountId, source.id) : 0,
    })
    const copy = await insertSiteCopy(trx, source, target, input.copy_schedule_and_trigger === true)
    await copyTags(trx, accountId, source.id, copy.id)
    if (input.copy_shared_setting) {
      await copySiteSources(trx, accountId, source.id, copy.id)
      await copyRules(trx, accountId, { siteId: source.id, channelId: null }, { siteId: copy.id, channelId: null })
    }
    if (input.copy_export) await copyChannels(trx, accountId, source.id, copy.id)
    const copied = { copied_from: source.id, copy_export: input.copy_export === true, copy_shared_setting: input.copy_shared_setting === true, ...copy }
    await recordActivity(trx, { accountId, action: 'site.copied', target: siteTarget(copy), changes: changesBetween(null, copied) })
    await settleRequestClaim(tx, copy)
    return copy
  })
}

async function readCopyTarget(trx: DbHandle, accountId: string, source: Site, input: CopyInput): Promise<CopyTarget> {
  const title = readText(input.site_name, 'site_name') ?? ''
  if (title === '') throw new BadRequestError('site_name: is required and must not be empty')
  const projectId = bodyId(input.project_id) ?? source.project_id
  if (!isId(projectId)) throw new BadRequestError('project_id: must be a positive integer')
  await requireAccountProject(trx, accountId, projectId)
  return { title, projectId }
}

function insertSiteCopy(trx: DbHandle, source: Site, { title, projectId }: CopyTarget, withSchedule: boolean): Promise<Site> {
  return trx
    .insertInto('site')
    .values({
      account_id: source.account_id,
      project_id: projectId,
      title,
      status: source.status,
      id_column: source.id_column,
      import_schedule: withSchedule ? source.import_schedule : '',
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

async function copyTags(trx: DbHandle, accountId: string, fromSiteId: string, toSiteId: string): Promise<void> {
  await trx
    .insertInto('site_tag')
    .columns(['account_id', 'site_id', 'key', 'value', 'readonly'])
    .expression((eb) =>
      eb
        .selectFrom('site_tag')
        .select((s) => [s.val(accountId).as('account_id'), s.val(toSiteId).as('site_id'), 'key', 'value', 'readonly'])
        .where('account_id', '=', accountId)
        .where('site_id', '=', fromSiteId)
        .where('is_reference', '=', false),
    )
    .execute()
}

async function countOfSite(
  trx: DbHandle,
  table: 'site_tag' | 'data_source' | 'channel',
  accountId: string,
  siteId: string,
  withoutReference = false,
): Promise<number> {
  let query = trx
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('account_id', '=', accountId)
    .where('site_id', '=', siteId)
  if (withoutReference) query = query.where(sql<boolean>`NOT is_reference`)
  const row = await query.executeTakeFirstOrThrow()
  return Number(row.count)
}
