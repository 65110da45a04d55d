import { lockAccountCreates, requireRoom, type AccountLimits } from '../accounts/object-limits.js'
import type { Db, DbHandle } from '../db/database.js'
import type { SiteTag } from '../db/schema.js'
import { isUniqueViolation } from '../db/errors.js'
import { BadRequestError, ConflictError, NotFoundError } from '../errors.js'
import { bodyId, isId } from './ids.js'
import { getSite } from './sites.js'
import { readText } from './text-input.js'

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

export async function createTag(db: Db, accountId: string, siteSegment: string, input: TagInput, limits: AccountLimits): Promise<SiteTag> {
  return db.transaction().execute(async (trx) => {
    await lockAccountCreates(trx, accountId)
    const site = await getSite(trx, accountId, siteSegment)
    const givenSiteId = bodyId(input.site_id)
    if (givenSiteId !== undefined && givenSiteId !== site.id) {
      throw new BadRequestError(`site_id: must match the site in the path (${site.id})`)
    }
    const key = readText(input.key, 'key') ?? ''
    const value = readText(input.value, 'value') ?? ''
    if (key === '') throw new BadRequestError('key: is required and must not be empty')
    if (key.includes(':')) throw new BadRequestError('key: must not contain ":" (sites are looked up as <tagName>:<tagValue>)')
    if (value === '') throw new BadRequestError('value: is required and must not be empty')
    const readonly = readReadonly(input.readonly)
    await requireRoom(trx, accountId, limits, { tags: 1 })
    try {
      return await trx
        .insertInto('site_tag')
        .values({ account_id: accountId, site_id: site.id, key, value, readonly })
        .returningAll()
        .executeTakeFirstOrThrow()
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(`Site ${site.id} already has the tag ${key}:${value}`)
      throw error
    }
  })
}

export async function deleteTag(db: DbHandle, accountId: string, siteSegment: string, tagId: string): Promise<void> {
  const site = await getSite(db, accountId, siteSegment)
  const tag = isId(tagId)
    ? await db
        .selectFrom('site_tag')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('site_id', '=', site.id)
        .where('id', '=', tagId)
        .executeTakeFirst()
    : undefined
  if (!tag) throw new NotFoundError()
  if (tag.readonly) throw new BadRequestError(`Tag ${tag.id} is readonly and cannot be deleted`)
  await db.deleteFrom('site_tag').where('account_id', '=', accountId).where('id', '=', tag.id).execute()
}

function readReadonly(value: TagInput['readonly']): boolean {
  if (value === null || value === undefined || value === '') return false
  if (value === 1 || value === '1' || value === true) return true
  if (value === 0 || value === '0' || value === false) return false
  throw new BadRequestError('readonly: must be 0 or 1')
}
