import { lockAccountCreates, requireRoom, type AccountLimits } from '../accounts/object-limits.js'
import type { Db, DbHandle } from '../db/database.js'
import { inTransaction, type TransactionOptions } from '../db/transaction.js'
import type { Site } from '../db/schema.js'
import { isUniqueViolation, retryingConflicts } from '../db/errors.js'
import { BadRequestError, ConflictError, NotFoundError } from '../errors.js'
import { bodyId, isId } from '../db/ids.js'
import type { FeedStorage } from '../feeds/feed-storage.js'
import { getProject } from './projects.js'
import { parseReference, readReference, readSiteChanges, type Reference, type SiteInput } from './site-input.js'
import { changesBetween } from '../activity/activity-changes.js'
import { recordActivity } from '../activity/activity-store.js'
import { settleRequestClaim } from '../activity/request-scope.js'
import { admitWaitingRuns, type RunTurns } from '../runs/run-admission-store.js'

/** Every site a path segment names: a numeric id, or `<tagName>:<tagValue>` (a tag or a reference). */
export async function findSites(db: DbHandle, accountId: string, segment: string): Promise<Site[]> {
  const matches = await matchSites(db, accountId, segment)
  return matches.map(({ is_reference: _, ...site }) => site)
}

/**
 * The one site a path segment names; a reference wins over ordinary tags shared by several sites.
 * `forUpdate`: the rows named locked until the transaction ends, for a change that reads the site
 * and then writes it (see getChannel): the activity log's "before" is then what it replaced.
 */
export async function getSite(db: DbHandle, accountId: string, segment: string, { forUpdate = false } = {}): Promise<Site> {
  const [first, second] = await matchSites(db, accountId, segment, forUpdate)
  if (!first) throw new NotFoundError()
  if (second && !first.is_reference) throw new BadRequestError(`Site "${segment}" is ambiguous: several sites carry this tag`)
  const { is_reference: _, ...site } = first
  return site
}

async function matchSites(db: DbHandle, accountId: string, segment: string, forUpdate = false): Promise<(Site & { is_reference: boolean })[]> {
  if (isId(segment)) {
    const byId = db.selectFrom('site').selectAll().where('account_id', '=', accountId).where('id', '=', segment)
    const site = await (forUpdate ? byId.forNoKeyUpdate() : byId).executeTakeFirst()
    return site ? [{ ...site, is_reference: false }] : []
  }
  const reference = parseReference(segment)
  if (!reference) return []
  const tagged = db
    .selectFrom('site')
    .innerJoin('site_tag', 'site_tag.site_id', 'site.id')
    .selectAll('site')
    .select('site_tag.is_reference')
    .where('site.account_id', '=', accountId)
    .where('site_tag.account_id', '=', accountId)
    .where('site_tag.key', '=', reference.key)
    .where('site_tag.value', '=', reference.value)
    .orderBy('site_tag.is_reference', 'desc')
    .orderBy('site.id')
  return (forUpdate ? tagged.forNoKeyUpdate('site') : tagged).execute()
}

export async function listSites(db: DbHandle, accountId: string, projectId?: string): Promise<Site[]> {
  let query = db.selectFrom('site').selectAll().where('account_id', '=', accountId)
  if (projectId !== undefined) query = query.where('project_id', '=', (await getProject(db, accountId, projectId)).id)
  return query.orderBy('id').execute()
}

/** Creates a site; `pathProjectId` is the project of `/projects/{projectId}/sites`. */
export async function createSite(db: Db, accountId: string, input: SiteInput, limits: AccountLimits, pathProjectId?: string): Promise<Site> {
  if (bodyId(input.id) !== undefined) throw new BadRequestError('id: must be empty on create')
  if (input.created_at) throw new BadRequestError('created_at: must be empty on create')
  const changes = readSiteChanges(input, limits.schedule)
  if (changes.title === undefined) throw new BadRequestError('title: is required and must not be empty')
  let projectId = changes.projectId
  if (pathProjectId !== undefined) {
    const project = await getProject(db, accountId, pathProjectId)
    if (projectId !== undefined && projectId !== project.id) {
      throw new BadRequestError(`project_id: must match the project in the path (${project.id})`)
    }
    projectId = project.id
  }
  if (projectId === undefined) throw new BadRequestError('project_id: is required')
  const reference = readReference(input)

  return inTransaction(db, async (tx) => {
    const trx = tx.db
    await lockAccountCreates(trx, accountId)
    await requireAccountProject(trx, accountId, projectId)
    // The reference is a tag of the site, so it counts against the tags.
    await requireRoom(trx, accountId, limits, { sites: 1, tags: reference ? 1 : 0 })
    const site = await trx
      .insertInto('site')
      .values({
        account_id: accountId,
        project_id: projectId,
        title: changes.title ?? '',
        status: changes.status ?? 'active',
        import_schedule: changes.importSchedule ?? '',
        id_column: changes.idColumn ?? 'id',
      })
      .returningAll()
      .executeTakeFirstOrThrow()
    if (reference) await addReference(trx, accountId, site.id, reference)
    const recorded = reference ? { ...site, reference: `${reference.key}:${reference.value}` } : site
    await recordActivity(trx, { accountId, action: 'site.created', target: siteTarget(site), changes: changesBetween(null, recorded) })
    await settleRequestClaim(tx, site)
    return site
  })
}

/** A site as the activity log names it. */
export function siteTarget(site: Pick<Site, 'id'>) {
  return { type: 'site', id: site.id, siteId: site.id }
}

export async function updateSite(db: Db, accountId: string, segment: string, input: SiteInput, limits: AccountLimits, pathProjectId?: string): Promise<Site> {
  return inTransaction(db, async ({ db: trx }) => {
    const site = await getSite(trx, accountId, segment, { forUpdate: true })
    const updated = await updateSiteRow(trx, { accountId, site, input, limits, pathProjectId })
    const changes = changesBetween(site, updated)
    if (Object.keys(changes).length > 0) await recordActivity(trx, { accountId, action: 'site.updated', target: siteTarget(site), changes })
    return updated
  })
}

interface SiteUpdate {
  accountId: string
  site: Site
  input: SiteInput
  limits: AccountLimits
  pathProjectId: string | undefined
}

async function updateSiteRow(db: DbHandle, { accountId, site, input, limits, pathProjectId }: SiteUpdate): Promise<Site> {
  if (pathProjectId !== undefined && (await getProject(db, accountId, pathProjectId)).id !== site.project_id) {
    throw new NotFoundError()
  }
  const givenId = bodyId(input.id)
  if (givenId !== undefined && givenId !== site.id) throw new BadRequestError(`id: must match the site in the path (${site.id})`)
  const changes = readSiteChanges(input, limits.schedule)
  if (changes.projectId !== undefined) await requireAccountProject(db, accountId, changes.projectId)
  return db
    .updateTable('site')
    .set({
      title: changes.title,
      project_id: changes.projectId,
      id_column: changes.idColumn,
      status: changes.status,
      import_schedule: changes.importSchedule,
      updated_at: new Date(),
    })
    .where('account_id', '=', accountId)
    .where('id', '=', site.id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export interface SiteDeletion extends Pick<TransactionOptions, 'onHookError'> {
  /** Where the feed files of the site's channels are. */
  storage: FeedStorage
  /** The run queue: an admitted run that goes with the site hands its account's turn on. */
  runs: RunTurns
  accountId: string
  /** The site's id or reference. */
  segment: string
  /** The project of the path `/projects/{p}/sites/{s}`: only a site of that project is deleted. */
  pathProjectId?: string
}

/**
 * Deletes a site with everything it has. Its runs go with it: a queued one never starts (when it
 * was admitted, the account's turn passes on to its next waiting run), and a running one stops at
 * its next write to the site (src/jobs/run-worker.ts). The feed files its channels served are removed
 * once the commit leaves no row naming them, never before; `onHookError` hears of a removal that failed.
 */
export async function deleteSite(db: Db, { storage, runs, accountId, segment, pathProjectId, onHookError }: SiteDeletion): Promise<void> {
  // A transaction of a run of the site may hold rows this delete needs while waiting for the site
  // row: Postgres ends one of the two, and when it is this one, it is tried again.
  await retryingConflicts(() =>
    inTransaction(
      db,
      async (tx) => {
        const trx = tx.db
        const site = await getSite(trx, accountId, segment)
        // Addressed below a project (`/projects/{p}/sites/{s}`, as the PHP client deletes): only a site of that project.
        if (pathProjectId !== undefined && site.project_id !== pathProjectId) throw new NotFoundError()
        // The schedule row before the site row: the scheduler holds a due site's schedule row while
        // it queues the site's run, which takes the site row; the other order would have the two
        // wait for each other, partly outside Postgres, where no deadlock detection sees it.
        await trx.deleteFrom('site_schedule').where('account_id', '=', accountId).where('site_id', '=', site.id).execute()
        const files = await trx
          .selectFrom('feed_file as f')
          .innerJoin('channel as c', 'c.id', 'f.channel_id')
          .select('f.storage_key')
          .where('f.account_id', '=', accountId)
          .where('c.account_id', '=', accountId)
          .where('c.site_id', '=', site.id)
          .execute()
        // Its stage rows have no foreign key (bulk loads would pay for it): the hourly cleanup removes them.
        await trx
          .insertInto('site_purge')
          .values({ site_id: site.id })
          .onConflict((oc) => oc.doNothing())
          .execute()
        // A concurrent delete of the same site took it first (this one waited for its row): a 404, as after it.
        const deleted = await trx.deleteFrom('site').where('account_id', '=', accountId).where('id', '=', site.id).executeTakeFirst()
        if (Number(deleted.numDeletedRows) === 0) throw new NotFoundError()
        if ((await admitWaitingRuns(trx, runs, accountId)) > 0) tx.onCommit(() => runs.wake())
        await recordActivity(trx, { accountId, action: 'site.deleted', target: siteTarget(site), changes: changesBetween(site, null) })
        const keys = files.map((file) => file.storage_key)
        tx.onCommit(() => storage.remove(keys))
      },
      { onHookError },
    ),
  )
}

export async function requireAccountProject(db: DbHandle, accountId: string, projectId: string): Promise<void> {
  const project = await db.selectFrom('project').select('id').where('account_id', '=', accountId).where('id', '=', projectId).executeTakeFirst()
  if (!project) throw new BadRequestError(`project_id: no project ${projectId} in this account`)
}

/** A reference is taken when any site of the account already carries that tag. */
async function addReference(db: DbHandle, accountId: string, siteId: string, reference: Reference): Promise<void> {
  const taken = await db
    .selectFrom('site_tag')
    .select('site_id')
    .where('account_id', '=', accountId)
    .where('key', '=', reference.key)
    .where('value', '=', reference.value)
    .executeTakeFirst()
  if (taken) throw new ConflictError(`reference: ${reference.key}:${reference.value} is already used by site ${taken.site_id}`)
  try {
    await db
      .insertInto('site_tag')
      .values({ account_id: accountId, site_id: siteId, key: reference.key, value: reference.value, readonly: true, is_reference: true })
      .execute()
  } catch (error) {
    // Two creates racing for the same reference: the partial unique index decides.
    if (isUniqueViolation(error)) throw new ConflictError(`reference: ${reference.key}:${reference.value} is already used by another site`)
    throw error
  }
}
