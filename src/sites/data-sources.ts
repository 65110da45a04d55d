import { lockAccountCreates, requireRoom, type AccountLimits } from '../accounts/object-limits.js'
import type { Db, DbHandle } from '../db/database.js'
import { inTransaction } from '../db/transaction.js'
import type { DataSource } from '../db/schema.js'
import { BadRequestError, NotFoundError } from '../errors.js'
import { bodyId, isId } from '../db/ids.js'
import { getSite } from './sites.js'
import { changesBetween } from '../activity/activity-changes.js'
import { recordActivity } from '../activity/activity-store.js'
import { settleRequestClaim } from '../activity/request-scope.js'
import { checkText } from '../input/text-input.js'

export interface DataSourceInput {
  import_type?: string | number | null
  description?: string | null
  stream_id?: string | number | null
  status?: string | null
  import_empty?: boolean | null
}

export interface SourcePage {
  sources: DataSource[]
  cursor: { current: number; prev: number; next: number; count: number }
}

/** A data source's statuses: the one list the API's schemas and the checks here use. */
export const SOURCE_STATUSES = ['active', 'paused'] as const

/**
 * Cursor paging (docs/interface.md): `cursor` returns the sources whose ids come after it, `previous` the
 * page that ends before that id. `next` is the cursor of the following page (0 when none), `prev`
 * the value of `previous` that returns the page before this one (0 when none).
 */
export async function listDataSources(
  db: DbHandle,
  accountId: string,
  siteSegment: string,
  page: { limit: number; cursor: number; previous: number },
): Promise<SourcePage> {
  const site = await getSite(db, accountId, siteSegment)
  // The stream endpoints show stream sources; the sources endpoints (site-sources.ts) show every kind.
  const ofSite = db.selectFrom('data_source').selectAll().where('account_id', '=', accountId).where('site_id', '=', site.id).where('kind', '=', 'stream')
  let rows: DataSource[]
  if (page.previous > 0) {
    rows = (
      await ofSite
        .where('id', '<', String(page.previous))
        .orderBy('id', 'desc')
        .limit(page.limit + 1)
        .execute()
    ).reverse()
    if (rows.length > page.limit) rows = rows.slice(1)
  } else {
    rows = await ofSite
      .where('id', '>', String(page.cursor))
      .orderBy('id')
      .limit(page.limit + 1)
      .execute()
  }
  const hasMore = page.previous > 0 ? true : rows.length > page.limit
  const sources = rows.slice(0, page.limit)
  const first = sources[0]
  const before = first
    ? await db
        .selectFrom('data_source')
        .select((eb) => eb.fn.max('id').as('id'))
        .where('account_id', '=', accountId)
        .where('site_id', '=', site.id)
        .where('kind', '=', 'stream')
        .where('id', '<', first.id)
        .executeTakeFirst()
    : undefined
  const beforeId = Number(before?.id ?? 0)
  return {
    sources,
    cursor: {
      // The cursor that returns this page, however it was reached.
      current: first ? beforeId : page.cursor,
      prev: beforeId > 0 && first ? Number(first.id) : 0,
      next: hasMore && sources.length > 0 ? Number(sources.at(-1)?.id) : 0,
      count: sources.length,
    },
  }
}

/** A data source of the site: a stream source (the stream endpoints), or of any kind (the sources endpoints, site-sources.ts). */
export async function getDataSource(
  db: DbHandle,
  accountId: string,
  siteSegment: string,
  sourceId: string,
  kinds: 'stream' | 'any' = 'stream',
  { forUpdate = false } = {},
): Promise<DataSource> {
  const site = await getSite(db, accountId, siteSegment)
  let query = db.selectFrom('data_source').selectAll().where('account_id', '=', accountId).where('site_id', '=', site.id).where('id', '=', sourceId)
  if (kinds === 'stream') query = query.where('kind', '=', 'stream')
  if (forUpdate) query = query.forUpdate()
  const source = isId(sourceId) ? await query.executeTakeFirst() : undefined
  if (!source) throw new NotFoundError()
  return source
}

export async function createDataSource(db: Db, accountId: string, siteSegment: string, input: DataSourceInput, limits: AccountLimits): Promise<DataSource> {
  return inTransaction(db, async (tx) => {
    const trx = tx.db
    await lockAccountCreates(trx, accountId)
    const site = await getSite(trx, accountId, siteSegment)
    const importType = readImportType(input.import_type, true)
    const status = readStatus(input.status, true)
    if (input.description === null || input.description === undefined) throw new BadRequestError('description: is required')
    const description = checkText(input.description, 'description')
    const streamId = bodyId(input.stream_id)
    if (streamId === undefined) throw new BadRequestError('stream_id: is required')
    if (!isId(streamId)) throw new BadRequestError('stream_id: must be a positive integer')
    const stream = await trx
      .selectFrom('stream')
      .select('id')
      .where('account_id', '=', accountId)
      .where('id', '=', streamId)
      .where('deleted_at', 'is', null)
      .where('source_owned', '=', false)
      .executeTakeFirst()
    if (!stream) throw new BadRequestError(`stream_id: no stream ${streamId} in this account`)
    await requireRoom(trx, accountId, limits, { dataSources: 1 })
    const source = await trx
      .insertInto('data_source')
      .values({
        account_id: accountId,
        site_id: site.id,
        stream_id: stream.id,
        import_type: importType ?? 1,
        description,
        status: status ?? 'active',
        import_empty: input.import_empty ?? false,
      })
      .returningAll()
      .executeTakeFirstOrThrow()
    await recordActivity(trx, {
      accountId,
      action: 'data_source.created',
      target: sourceTarget(source),
      changes: changesBetween(null, source, { omit: ['site_id'] }),
    })
    await settleRequestClaim(tx, source)
    return source
  })
}

export function sourceTarget(source: DataSource) {
  return { type: 'data_source', id: source.id, siteId: source.site_id }
}

export async function updateDataSource(db: Db, accountId: string, siteSegment: string, sourceId: string, input: DataSourceInput): Promise<DataSource> {
  return inTransaction(db, async ({ db: trx }) => {
    // Locked: concurrent changes take turns, each reading what the one before wrote (see getChannel).
    const source = await getDataSource(trx, accountId, siteSegment, sourceId, 'stream', { forUpdate: true })
    const updated = await updateSourceRow(trx, accountId, source, input)
    const changes = changesBetween(source, updated)
    if (Object.keys(changes).length > 0) await recordActivity(trx, { accountId, action: 'data_source.updated', target: sourceTarget(source), changes })
    return updated
  })
}

async function updateSourceRow(db: DbHandle, accountId: string, source: DataSource, input: DataSourceInput): Promise<DataSource> {
  const streamId = bodyId(input.stream_id)
  if (streamId !== undefined && streamId !== source.stream_id) {
    throw new BadRequestError('stream_id: cannot be changed; create a new data source for another stream')
  }
  const changes = {
    import_type: readImportType(input.import_type, false),
    description: input.description === null || input.description === undefined ? undefined : checkText(input.description, 'description'),
    status: readStatus(input.status, false),
    import_empty: input.import_empty ?? undefined,
  }
  // Clients send every field, null for unset ones (docs/compatibility.md): nothing given means nothing to change.
  if (Object.values(changes).every((value) => value === undefined)) return source
  return db.updateTable('data_source').set(changes).where('account_id', '=', accountId).where('id', '=', source.id).returningAll().executeTakeFirstOrThrow()
}

export async function deleteDataSource(db: Db, accountId: string, siteSegment: string, sourceId: string): Promise<DataSource> {
  return inTransaction(db, async ({ db: trx }) => {
    const source = await getDataSource(trx, accountId, siteSegment, sourceId, 'stream', { forUpdate: true })
    await trx.deleteFrom('data_source').where('account_id', '=', accountId).where('id', '=', source.id).execute()
    await recordActivity(trx, {
      accountId,
      action: 'data_source.deleted',
      target: sourceTarget(source),
      changes: changesBetween(source, null, { omit: ['site_id'] }),
    })
    return source
  })
}

export function readImportType(value: DataSourceInput['import_type'], required: boolean): number | undefined {
  if (value === null || value === undefined || value === '') {
    if (required) throw new BadRequestError('import_type: is required (1 = main data feed, 2 = additional data feed)')
    return undefined
  }
  const type = Number(value)
  if (type !== 1 && type !== 2) throw new BadRequestError('import_type: must be 1 (main data feed) or 2 (additional data feed)')
  return type
}

export function readStatus(value: string | null | undefined, required: boolean): 'active' | 'paused' | undefined {
  if (value === null || value === undefined) {
    if (required) throw new BadRequestError('status: is required (active or paused)')
    return undefined
  }
  if (!(SOURCE_STATUSES as readonly string[]).includes(value)) throw new BadRequestError(`status: must be one of ${SOURCE_STATUSES.join(', ')}`)
  return value as 'active' | 'paused'
}
