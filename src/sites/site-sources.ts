import { randomUUID } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import { lockAccountCreates, requireRoom, type AccountLimits } from '../accounts/object-limits.js'
import { changesBetween } from '../activity/activity-changes.js'
import { recordActivity } from '../activity/activity-store.js'
import { settleRequestClaim } from '../activity/request-scope.js'
import type { CredentialBox } from '../auth/credential-box.js'
import type { OutboundGuard } from '../net/outbound-guard.js'
import type { Db, DbHandle } from '../db/database.js'
import type { DataSource, FetchedSourceSettings, Site } from '../db/schema.js'
import { inTransaction } from '../db/transaction.js'
import { BadRequestError } from '../errors.js'
import { checkText } from '../input/text-input.js'
import { OutboundRefusedError } from '../net/outbound-guard.js'
import { readFetchedSource, type FetchedSource, type FetchedSourceInput } from './source-input.js'
import {
  createDataSource,
  deleteDataSource,
  getDataSource,
  readImportType,
  readStatus,
  sourceTarget,
  updateDataSource,
  type DataSourceInput,
} from './data-sources.js'
import { getSite } from './sites.js'

// A site's sources of every kind: its stream sources (data-sources.ts, which the stream
// endpoints keep serving) and the sources it fetches itself, a feed URL or a file on an SFTP server.
// A fetched source keeps its rows in a stream of its own that no interface shows; its credentials
// are sealed and never shown back.

export interface SiteSourceInput extends DataSourceInput, FetchedSourceInput {
  type?: unknown
}

/** What saving a source needs: the account's limits, the outbound guard, the key that seals credentials. */
export interface SourceConnectors {
  limits: AccountLimits
  guard: OutboundGuard
  credentials: CredentialBox
}

const KINDS = ['stream', 'feed_url', 'sftp'] as const

export async function listSiteSources(
  db: DbHandle,
  accountId: string,
  siteSegment: string,
  page: { limit: number; cursor: number },
): Promise<{ sources: DataSource[]; next: number }> {
  return sourcesOfSite(db, await getSite(db, accountId, siteSegment), page)
}

/** The data sources of a site already resolved, in pages by id. */
export async function sourcesOfSite(db: DbHandle, site: Site, page: { limit: number; cursor: number }): Promise<{ sources: DataSource[]; next: number }> {
  const rows = await db
    .selectFrom('data_source')
    .selectAll()
    .where('account_id', '=', site.account_id)
    .where('site_id', '=', site.id)
    .where('id', '>', String(page.cursor))
    .orderBy('id')
    .limit(page.limit + 1)
    .execute()
  const sources = rows.slice(0, page.limit)
  return { sources, next: rows.length > page.limit ? Number(sources.at(-1)?.id) : 0 }
}

export function getSiteSource(db: DbHandle, accountId: string, siteSegment: string, sourceId: string): Promise<DataSource> {
  return getDataSource(db, accountId, siteSegment, sourceId, 'any')
}

export async function createSiteSource(
  db: Db,
  accountId: string,
  siteSegment: string,
  input: SiteSourceInput,
  connectors: SourceConnectors,
): Promise<DataSource> {
  const kind = readKind(input.type)
  if (kind === 'stream') return createDataSource(db, accountId, siteSegment, input, connectors.limits)
  const fetched = readFetchedSource(kind, input)
  await checkReachable(fetched.settings, connectors)
  const sealed = sealedFor(fetched, undefined, connectors)
  return inTransaction(db, async (tx) => {
    const trx = tx.db
    await lockAccountCreates(trx, accountId)
    const site = await getSite(trx, accountId, siteSegment)
    await requireRoom(trx, accountId, connectors.limits, { dataSources: 1 })
    const stream = await insertSourceStream(trx, accountId, new Date())
    const source = await trx
      .insertInto('data_source')
      .values({
        account_id: accountId,
        site_id: site.id,
        stream_id: stream.id,
        kind,
        import_type: readImportType(input.import_type, false) ?? 1,
        description: readDescription(input.description) ?? '',
        status: readStatus(input.status, false) ?? 'active',
        import_empty: readImportEmpty(input.import_empty) ?? false,
        settings: JSON.stringify(fetched.settings),
        sealed_credentials: sealed,
      })
      .returningAll()
      .executeTakeFirstOrThrow()
    await recordActivity(trx, { accountId, action: 'data_source.created', target: sourceTarget(source), changes: sourceChanges(null, source) })
    await settleRequestClaim(tx, source)
    return source
  })
}

/** Replaces a fetched source's settings (a PUT); a stream source's fields change as on its own endpoint. */
export async function updateSiteSource(
  db: Db,
  accountId: string,
  siteSegment: string,
  sourceId: string,
  input: SiteSourceInput,
  connectors: SourceConnectors,
): Promise<DataSource> {
  const current = await getSiteSource(db, accountId, siteSegment, sourceId)
  const given = input.type === undefined || input.type === null ? current.kind : readKind(input.type)
  if (given !== current.kind) throw new BadRequestError(`type: a ${current.kind} source cannot become a ${given} source; create a new source instead`)
  if (current.kind === 'stream') return updateDataSource(db, accountId, siteSegment, sourceId, input)
  const fetched = readFetchedSource(current.kind, input)
  await checkReachable(fetched.settings, connectors)
  return inTransaction(db, async ({ db: trx }) => {
    // Read again in the transaction, locked: a concurrent change's credentials are never put back.
    const before = await getDataSource(trx, accountId, siteSegment, sourceId, 'any', { forUpdate: true })
    const sealed = sealedFor(fetched, before, connectors)
    const changedWhat = !isDeepStrictEqual(before.settings, fetched.settings) || sealed !== before.sealed_credentials
    const updated = await trx
      .updateTable('data_source')
      .set({
        import_type: readImportType(input.import_type, false) ?? before.import_type,
        description: readDescription(input.description) ?? before.description,
        status: readStatus(input.status, false) ?? before.status,
        import_empty: readImportEmpty(input.import_empty) ?? before.import_empty,
        settings: JSON.stringify(fetched.settings),
        sealed_credentials: sealed,
        // Other settings may read the same file otherwise: the next fetch reads it whatever its validators say.
        ...(changedWhat && { fetch_state: null }),
      })
      .where('account_id', '=', accountId)
      .where('id', '=', before.id)
      .returningAll()
      .executeTakeFirstOrThrow()
    const changes = sourceChanges(before, updated)
    if (Object.keys(changes).length > 0) await recordActivity(trx, { accountId, action: 'data_source.updated', target: sourceTarget(updated), changes })
    return updated
  })
}

export async function deleteSiteSource(db: Db, accountId: string, siteSegment: string, sourceId: string): Promise<DataSource> {
  const current = await getSiteSource(db, accountId, siteSegment, sourceId)
  if (current.kind === 'stream') return deleteDataSource(db, accountId, siteSegment, sourceId)
  return inTransaction(db, async ({ db: trx }) => {
    const source = await getDataSource(trx, accountId, siteSegment, sourceId, 'any', { forUpdate: true })
    // Its own stream goes with it (the data_source_drops_its_stream trigger).
    await trx.deleteFrom('data_source').where('account_id', '=', accountId).where('id', '=', source.id).execute()
    await recordActivity(trx, { accountId, action: 'data_source.deleted', target: sourceTarget(source), changes: sourceChanges(source, null) })
    return source
  })
}

/**
 * Site copy: every source, in its order (the order sources stack in). A stream source refers to the
 * same stream; a fetched source's copy gets its settings and sealed credentials, and a stream of its
 * own, empty until its first fetch.
 */
export async function copySiteSources(db: DbHandle, accountId: string, fromSiteId: string, toSiteId: string): Promise<void> {
  const sources = await db.selectFrom('data_source').selectAll().where('account_id', '=', accountId).where('site_id', '=', fromSiteId).orderBy('id').execute()
  const now = new Date()
  for (const source of sources) {
    const { import_type, description, status, import_empty, kind, settings, sealed_credentials } = source
    const stream = kind === 'stream' ? { id: source.stream_id } : await insertSourceStream(db, accountId, now)
    await db
      .insertInto('data_source')
      .values({
        account_id: accountId,
        site_id: toSiteId,
        stream_id: stream.id,
        import_type,
        description,
        status,
        import_empty,
        kind,
        settings: settings === null ? null : JSON.stringify(settings),
        sealed_credentials,
      })
      .execute()
  }
}

/** A fetched source's own stream, named so that no client can guess or take the name (names are unique per account). */
function insertSourceStream(db: DbHandle, accountId: string, now: Date): Promise<{ id: string }> {
  return db
    .insertInto('stream')
    .values({
      account_id: accountId,
      name: `source ${randomUUID()}`,
      type: 'chunked',
      content_type: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
      source_owned: true,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
}

function readKind(value: unknown): (typeof KINDS)[number] {
  if (value === undefined || value === null) throw new BadRequestError(`type: required, one of ${KINDS.join(', ')}`)
  if (!KINDS.includes(value as (typeof KINDS)[number])) throw new BadRequestError(`type: one of ${KINDS.join(', ')}`)
  return value as (typeof KINDS)[number]
}

function readDescription(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw new BadRequestError('description: a string')
  return checkText(value, 'description')
}

function readImportEmpty(value: unknown): boolean | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'boolean') throw new BadRequestError('import_empty: true or false')
  return value
}

/** The save-time check of where the source points: the same guard every fetch passes. */
async function checkReachable(settings: FetchedSourceSettings, { guard }: SourceConnectors): Promise<void> {
  try {
    if (settings.kind === 'feed_url') await guard.checkUrl(settings.url)
    else await guard.checkHost(settings.host)
  } catch (error) {
    if (error instanceof OutboundRefusedError) throw new BadRequestError(`${settings.kind === 'feed_url' ? 'url' : 'host'}: not allowed: ${error.reason}`)
    throw error
  }
}

/**
 * The credentials to store: those given, sealed; else those stored, when they belong to the same
 * login (another server, user or host key asks for them again); else none where none are needed.
 */
function sealedFor(fetched: FetchedSource, current: DataSource | undefined, { credentials }: SourceConnectors): string | null {
  if (fetched.credentials) return credentials.seal(JSON.stringify(fetched.credentials))
  const stored = current?.settings && current.sealed_credentials && sameLogin(current.settings, fetched.settings) ? current.sealed_credentials : null
  const settings = fetched.settings
  if (stored) return stored
  if (settings.kind === 'sftp') throw new BadRequestError('password: a password or private_key is required for a new sftp login')
  if (settings.basic_user !== undefined) throw new BadRequestError('auth.password: required for a new basic-auth login')
  if (settings.header_name !== undefined) throw new BadRequestError('auth.value: required for a new header')
  return null
}

function sameLogin(stored: FetchedSourceSettings, given: FetchedSourceSettings): boolean {
  if (stored.kind === 'feed_url' && given.kind === 'feed_url') {
    // A secret goes to the origin it was given for, never to another one.
    return new URL(stored.url).origin === new URL(given.url).origin && stored.basic_user === given.basic_user && stored.header_name === given.header_name
  }
  if (stored.kind === 'sftp' && given.kind === 'sftp') {
    return stored.host === given.host && stored.port === given.port && stored.user === given.user && stored.host_key_sha256 === given.host_key_sha256
  }
  return false
}

/** An activity entry's changes: the settings as they are, the credentials only as "changed". */
function sourceChanges(before: DataSource | null, after: DataSource | null) {
  return changesBetween(before, after, { omit: ['site_id', 'last_fetch', 'fetch_state', 'stream_id'], secrets: ['sealed_credentials'] })
}
