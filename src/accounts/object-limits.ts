import { sql } from 'kysely'
import type { Config } from '../config.js'
import type { DbHandle } from '../db/database.js'
import { BadRequestError } from '../errors.js'

// Bounds on what one account may create (docs/design.md 9). A create counts and inserts in one
// transaction that first takes the account's creation lock, so concurrent creates of one account
// cannot both see room for the last object.

export type ObjectKind = 'projects' | 'sites' | 'channels' | 'tags' | 'dataSources'

/** Bounds of a schedule text (MAX_SCHEDULE_LINES, MAX_SCHEDULE_CHARS). */
export interface ScheduleLimits {
  maxLines: number
  maxChars: number
}

export interface AccountLimits {
  objects: Record<ObjectKind, number>
  schedule: ScheduleLimits
}

const SETTING: Record<ObjectKind, { variable: string; noun: string }> = {
  projects: { variable: 'MAX_PROJECTS_PER_ACCOUNT', noun: 'projects' },
  sites: { variable: 'MAX_SITES_PER_ACCOUNT', noun: 'sites' },
  channels: { variable: 'MAX_CHANNELS_PER_ACCOUNT', noun: 'channels' },
  tags: { variable: 'MAX_TAGS_PER_ACCOUNT', noun: 'site tags (references included)' },
  dataSources: { variable: 'MAX_DATA_SOURCES_PER_ACCOUNT', noun: 'data sources' },
}

export function accountLimits(config: Config): AccountLimits {
  return {
    objects: {
      projects: config.MAX_PROJECTS_PER_ACCOUNT,
      sites: config.MAX_SITES_PER_ACCOUNT,
      channels: config.MAX_CHANNELS_PER_ACCOUNT,
      tags: config.MAX_TAGS_PER_ACCOUNT,
      dataSources: config.MAX_DATA_SOURCES_PER_ACCOUNT,
    },
    schedule: { maxLines: config.MAX_SCHEDULE_LINES, maxChars: config.MAX_SCHEDULE_CHARS },
  }
}

/**
 * Serialises the creates of one account until the transaction ends. FOR NO KEY UPDATE conflicts
 * with itself (and with the stream creator's FOR UPDATE) but not with the key-share locks that
 * foreign keys take, so uploads of the account, however slow, never hold a create up.
 */
export async function lockAccountCreates(trx: DbHandle, accountId: string): Promise<void> {
  await trx.selectFrom('account').select('id').where('id', '=', accountId).forNoKeyUpdate().executeTakeFirst()
}

/**
 * Refuses, naming the limit, when adding `adding` objects of each kind would pass the account's
 * limits. Call inside the transaction that inserts them, after lockAccountCreates.
 */
export async function requireRoom(trx: DbHandle, accountId: string, limits: AccountLimits, adding: Partial<Record<ObjectKind, number>>): Promise<void> {
  for (const [kind, count] of Object.entries(adding) as [ObjectKind, number][]) {
    if (count <= 0) continue
    const max = limits.objects[kind]
    const have = await countObjects(trx, accountId, kind, max)
    if (have + count > max) {
      const { variable, noun } = SETTING[kind]
      const detail = count === 1 ? `it has ${have}` : `it has ${have} and this would add ${count}`
      throw new BadRequestError(`An account can have at most ${max} ${noun} (${variable}); ${detail}. Delete some before creating more`)
    }
  }
}

// Counted up to the limit only: the answer is "how many, or at least the limit", whatever an
// account holds. Channels and data sources are reached through the account's sites, whose index
// leads with account_id, instead of a scan of every account's rows.
async function countObjects(trx: DbHandle, accountId: string, kind: ObjectKind, max: number): Promise<number> {
  const rows = {
    projects: sql`SELECT 1 FROM project WHERE account_id = ${accountId}`,
    sites: sql`SELECT 1 FROM site WHERE account_id = ${accountId}`,
    tags: sql`SELECT 1 FROM site_tag WHERE account_id = ${accountId}`,
    channels: sql`SELECT 1 FROM site s JOIN channel c ON c.site_id = s.id WHERE s.account_id = ${accountId} AND c.account_id = ${accountId}`,
    dataSources: sql`SELECT 1 FROM site s JOIN data_source d ON d.site_id = s.id WHERE s.account_id = ${accountId} AND d.account_id = ${accountId}`,
  }[kind]
  const result = await sql<{ count: string }>`SELECT count(*) AS count FROM (${rows} LIMIT ${max}) x`.execute(trx)
  return Number(result.rows[0]?.count ?? 0)
}
