import { lockAccountCreates, requireRoom, type AccountLimits } from '../accounts/object-limits.js'
import type { Db, DbHandle } from '../db/database.js'
import { inTransaction } from '../db/transaction.js'
import type { SiteTag } from '../db/schema.js'
import { isUniqueViolation } from '../db/errors.js'
import { BadRequestError, ConflictError, NotFoundError } from '../errors.js'
import { bodyId, isId } from '../db/ids.js'
import { findSites, getSite } from './sites.js'
import { readText } from '../input/text-input.js'
import { changesBetween } from '../activity/activity-changes.js'
import { recordActivity } from '../activity/activity-store.js'
import { settleRequestClaim } from '../activity/request-scope.js'

export interface TagInput {
  site_id?: string | number | null
  key?: string | null
  value?: string | null
  readonly?: string | number | boolean | null
}

export async function listTags(db: DbHandle, accountId: string, siteSegment: string): Promise<SiteTag[]> {
  const site = await getSite(db, accountId, siteSegment)
  return db.selectFrom('site_tag').selectAll().where('account_id', '=', accountId).where('site_id', '=', site.id).orderBy('id').execute()
}

/** Creates a tag on the site the path names, or (no site in the path) on the body's `site_id`. */
export async function createTag(db: Db, accountId: string, siteSegment: string | undefined, input: TagInput, limits: AccountLimits): Promise<SiteTag> {
  return inTransaction(db, async (tx) => {
    const trx = tx.db
    await lockAccountCreates(trx, accountId)
    const site = await getSite(trx, accountId, siteSegment ?? siteOfTagBody(input))
    if (siteSegment !== undefined) await requireSameSite(trx, accountId, input, site.id, 'the site in the path')
    const { key = '', value = '', readonly = false } = readTagFields(input)
    if (key === '') throw new BadRequestError('key: is required and must not be empty')
    if (value === '') throw new BadRequestError('value: is required and must not be empty')
    await requireRoom(trx, accountId, limits, { tags: 1 })
    const tag = await trx
      .insertInto('site_tag')
      .values({ account_id: accountId, site_id: site.id, key, value, readonly })
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((error: unknown) => {
        throw isUniqueViolation(error) ? new ConflictError(`Site ${site.id} already has the tag ${key}:${value}`) : error
      })
    await recordActivity(trx, { accountId, action: 'tag.created', target: tagTarget(tag), changes: changesBetween(null, tag, { omit: ['site_id'] }) })
    await settleRequestClaim(tx, tag)
    return tag
  })
}

function tagTarget(tag: SiteTag) {
  return { type: 'tag', id: tag.id, siteId: tag.site_id }
}

/**
 * Changes a tag's key, value or readonly flag; fields not given (or null) keep their value. A
 * readonly tag and the site's reference never change: sites are looked up by them.
 */
export async function updateTag(
  db: Db,
  accountId: string,
  siteSegment: string | undefined,
  tagId: string,
  input: TagInput & { id?: string | number | null },
): Promise<SiteTag> {
  return inTransaction(db, async ({ db: trx }) => {
    const site = await getSite(trx, accountId, siteSegment ?? (await siteOfTag(trx, accountId, tagId)))
    const tag = await findTag(trx, accountId, site.id, tagId, { forUpdate: true })
    const givenId = bodyId(input.id)
    if (givenId !== undefined && givenId !== tag.id) throw new BadRequestError(`id: must match the tag in the path (${tag.id})`)
    await requireSameSite(trx, accountId, input, site.id, siteSegment === undefined ? "the tag's site" : 'the site in the path')
    if (tag.is_reference) throw new BadRequestError(`Tag ${tag.id} is the site's reference and cannot be changed`)
    if (tag.readonly) throw new BadRequestError(`Tag ${tag.id} is readonly and cannot be changed`)
    const fields = readTagFields(input)
    if (fields.key === '') throw new BadRequestError('key: must not be empty')
    if (fields.value === '') throw new BadRequestError('value: must not be empty')
    // A body that gives no field (`{}`, every field null) changes nothing, as for the other models.
    if (Object.keys(fields).length === 0) return tag
    const updated = await trx
      .updateTable('site_tag')
      .set(fields)
      .where('account_id', '=', accountId)
      .where('id', '=', tag.id)
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((error: unknown) => {
        throw isUniqueViolation(error) ? new ConflictError(`Site ${site.id} already has the tag ${fields.key ?? tag.key}:${fields.value ?? tag.value}`) : error
      })
    const changes = changesBetween(tag, updated)
    if (Object.keys(changes).length > 0) await recordActivity(trx, { accountId, action: 'tag.updated', target: tagTarget(updated), changes })
    return updated
  })
}

/** One tag of a site. */
export async function getTag(db: DbHandle, accountId: string, siteSegment: string | undefined, tagId: string): Promise<SiteTag> {
  const site = await getSite(db, accountId, siteSegment ?? (await siteOfTag(db, accountId, tagId)))
  return findTag(db, accountId, site.id, tagId)
}

// A tag addressed without its site (`/platform/v2/tags[/{tagId}]`, as the PHP client does when no
// site is set) belongs to the site its row names, or for a new tag to the body's `site_id`.
async function siteOfTag(db: DbHandle, accountId: string, tagId: string): Promise<string> {
  const tag = isId(tagId)
    ? await db.selectFrom('site_tag').select('site_id').where('account_id', '=', accountId).where('id', '=', tagId).executeTakeFirst()
    : undefined
  if (!tag) throw new NotFoundError()
  return tag.site_id
}

/** A `site_id` in a tag body (an id or a `<tagName>:<tagValue>` reference) must name the tag's site. */
async function requireSameSite(db: DbHandle, accountId: string, input: TagInput, siteId: string, which: string): Promise<void> {
  const given = bodyId(input.site_id)
  if (given === undefined || given === siteId) return
  const named = isId(given) ? undefined : await findSites(db, accountId, given)
  if (named?.length === 1 && named[0]?.id === siteId) return
  throw new BadRequestError(`site_id: must match ${which} (${siteId})`)
}

function siteOfTagBody(input: TagInput): string {
  const siteId = bodyId(input.site_id)
  if (siteId === undefined) throw new BadRequestError('site_id: is required when the path names no site')
  return siteId
}

export async function deleteTag(db: Db, accountId: string, siteSegment: string | undefined, tagId: string): Promise<void> {
  await inTransaction(db, async ({ db: trx }) => {
    const site = await getSite(trx, accountId, siteSegment ?? (await siteOfTag(trx, accountId, tagId)))
    const tag = await findTag(trx, accountId, site.id, tagId, { forUpdate: true })
    if (tag.readonly) throw new BadRequestError(`Tag ${tag.id} is readonly and cannot be deleted`)
    await trx.deleteFrom('site_tag').where('account_id', '=', accountId).where('id', '=', tag.id).execute()
    await recordActivity(trx, { accountId, action: 'tag.deleted', target: tagTarget(tag), changes: changesBetween(tag, null, { omit: ['site_id'] }) })
  })
}

async function findTag(db: DbHandle, accountId: string, siteId: string, tagId: string, options: { forUpdate?: boolean } = {}): Promise<SiteTag> {
  if (!isId(tagId)) throw new NotFoundError()
  let query = db.selectFrom('site_tag').selectAll().where('account_id', '=', accountId).where('site_id', '=', siteId).where('id', '=', tagId)
  if (options.forUpdate) query = query.forUpdate()
  const tag = await query.executeTakeFirst()
  if (!tag) throw new NotFoundError()
  return tag
}

/** The given fields of a tag body, checked; absent or null ones are left out. */
function readTagFields(input: TagInput): { key?: string; value?: string; readonly?: boolean } {
  const key = readText(input.key, 'key')
  if (key?.includes(':')) throw new BadRequestError('key: must not contain ":" (sites are looked up as <tagName>:<tagValue>)')
  const value = readText(input.value, 'value')
  const readonly = readReadonly(input.readonly)
  return { ...(key !== undefined && { key }), ...(value !== undefined && { value }), ...(readonly !== undefined && { readonly }) }
}

function readReadonly(value: TagInput['readonly']): boolean | undefined {
  if (value === null || value === undefined || value === '') return undefined
  if (value === 1 || value === '1' || value === true) return true
  if (value === 0 || value === '0' || value === false) return false
  throw new BadRequestError('readonly: must be 0 or 1')
}
