import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'
import { BadRequestError } from '../errors.js'
import type { ActivityEntry } from './activity-store.js'
import type { ActorType } from './request-scope.js'

export const ACTOR_TYPES: readonly ActorType[] = ['platform_credential', 'token', 'console', 'operator', 'cli', 'system']
export const MAX_ACTIVITY_PAGE = 100

/** The filters of an activity list, as a client writes them (every one optional). */
export interface ActivityFilterInput {
  action?: string
  actor?: string
  target_type?: string
  target_id?: string
  since?: string
  until?: string
  cursor?: string
  limit?: number | string
}

export interface ActivityFilter {
  /** An exact action, or a prefix (`rule.` from `rule.*`). */
  action?: { exact: string } | { prefix: string }
  actor?: { type: ActorType; id?: string }
  targetType?: string
  targetId?: string
  since?: Date
  until?: Date
  /** Entries below this id: the page after the one that ended there. */
  before?: string
  limit: number
}

/** Reads and checks the filters; a wrong one is a 400 naming it. */
export function readActivityFilter(input: ActivityFilterInput, defaultLimit = 50): ActivityFilter {
  for (const [name, value] of Object.entries(input)) {
    // Postgres text holds no NUL: refused here, whichever interface the filter came through.
    if (typeof value === 'string' && value.includes('\0')) throw new BadRequestError(`${name}: must not contain a NUL character`)
  }
  const filter: ActivityFilter = { limit: readLimit(input.limit, defaultLimit) }
  if (present(input.action)) filter.action = readAction(input.action)
  if (present(input.actor)) filter.actor = readActor(input.actor)
  if (present(input.target_type)) filter.targetType = bounded('target_type', input.target_type, 64)
  if (present(input.target_id)) filter.targetId = bounded('target_id', input.target_id, 255)
  if (present(input.since)) filter.since = readTime('since', input.since)
  if (present(input.until)) filter.until = readTime('until', input.until)
  if (present(input.cursor)) filter.before = readCursor(input.cursor)
  return filter
}

function present(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== ''
}

function readLimit(value: number | string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback
  // Digits only: Number() would take 0x10, 1e2, " 5" and +5 as well.
  const number = typeof value === 'number' ? value : /^\d{1,4}$/.test(value) ? Number(value) : NaN
  if (!Number.isInteger(number) || number < 1 || number > MAX_ACTIVITY_PAGE) {
    throw new BadRequestError(`limit: must be a whole number from 1 to ${MAX_ACTIVITY_PAGE}`)
  }
  return number
}

function readAction(text: string): ActivityFilter['action'] {
  const action = bounded('action', text.trim(), 100)
  const prefix = /^([a-z][a-z_]*(?:\.[a-z][a-z_]*)?)\.\*$/.exec(action)
  if (prefix) return { prefix: `${prefix[1]}.` }
  if (/^[a-z][a-z_]*\.[a-z][a-z_]*$/.test(action)) return { exact: action }
  throw new BadRequestError(`action: "${action.slice(0, 100)}" is not an action (noun.verb, as site.updated) nor a prefix of them (as rule.*)`)
}

function readActor(text: string): ActivityFilter['actor'] {
  const separator = text.indexOf(':')
  const type = (separator < 0 ? text : text.slice(0, separator)).trim()
  if (!(ACTOR_TYPES as readonly string[]).includes(type)) {
    throw new BadRequestError(`actor: "${type.slice(0, 100)}" is not an actor type; one of ${ACTOR_TYPES.join(', ')}, optionally followed by :<id>`)
  }
  const id = separator < 0 ? undefined : bounded('actor', text.slice(separator + 1).trim(), 255)
  if (id === '') throw new BadRequestError(`actor: "${type}:" names no id; write ${type} alone, or ${type}:<id>`)
  return { type: type as ActorType, ...(id ? { id } : {}) }
}

function bounded(name: string, text: string, max: number): string {
  if (text.length > max) throw new BadRequestError(`${name}: at most ${max} characters`)
  return text
}

const TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i

/** An ISO 8601 date or time; one without a zone is UTC (never the server's zone), and 2026-02-30 is no date. */
function readTime(name: string, text: string): Date {
  const parts = TIME.exec(text.trim())
  const refuse = () => new BadRequestError(`${name}: "${text.slice(0, 100)}" is not an ISO 8601 date or time (as 2026-11-27 or 2026-11-27T08:00:00Z)`)
  if (!parts) throw refuse()
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', zone = 'Z'] = parts
  const time = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}${fraction}${zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone}`)
  // Date rolls 02-30 over into March: the day must be one the month has.
  const calendar = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)))
  if (Number.isNaN(time.getTime()) || calendar.getUTCMonth() !== Number(month) - 1 || calendar.getUTCDate() !== Number(day)) throw refuse()
  return time
}

/** The cursor names the last entry of a page; opaque to clients, so that its form may change. */
export function activityCursor(entryId: string): string {
  return Buffer.from(`a1:${entryId}`).toString('base64url')
}

function readCursor(text: string): string {
  const decoded = /^[A-Za-z0-9_-]{1,64}$/.test(text) ? Buffer.from(text, 'base64url').toString() : ''
  const id = /^a1:(\d{1,18})$/.exec(decoded)?.[1]
  if (!id) throw new BadRequestError('cursor: not a cursor this list gave; pass next_cursor from the previous page as it is')
  return id
}

export interface ActivityScopeFilter {
  /** The account whose entries are listed; null lists every account's (the operator's view). */
  accountId: string | null
  siteId?: string
}

export interface ActivityPage {
  entries: ActivityEntry[]
  /** The cursor of the next (older) page; null on the last. */
  nextCursor: string | null
}

/** Newest first, a page at a time: keyset on the id, so entries that arrive meanwhile never shift a page. */
export async function listActivity(db: DbHandle, scope: ActivityScopeFilter, filter: ActivityFilter): Promise<ActivityPage> {
  let query = db.selectFrom('activity').selectAll()
  if (scope.accountId !== null) query = query.where('account_id', '=', scope.accountId)
  if (scope.siteId !== undefined) query = query.where('site_id', '=', scope.siteId)
  const { action, actor } = filter
  if (action && 'exact' in action) query = query.where('action', '=', action.exact)
  if (action && 'prefix' in action) query = query.where(sql<boolean>`starts_with(action, ${action.prefix})`)
  if (actor) query = query.where('actor_type', '=', actor.type)
  if (actor?.id !== undefined) query = query.where('actor_id', '=', actor.id)
  if (filter.targetType !== undefined) query = query.where('target_type', '=', filter.targetType)
  if (filter.targetId !== undefined) query = query.where('target_id', '=', filter.targetId)
  if (filter.since) query = query.where('occurred_at', '>=', filter.since)
  if (filter.until) query = query.where('occurred_at', '<', filter.until)
  if (filter.before !== undefined) query = query.where('id', '<', filter.before)
  const rows = await query
    .orderBy('id', 'desc')
    .limit(filter.limit + 1)
    .execute()
  const entries = rows.slice(0, filter.limit).map((row) => ({
    id: row.id,
    occurredAt: row.occurred_at,
    accountId: row.account_id,
    actor: { type: row.actor_type as ActorType, id: row.actor_id, label: row.actor_label },
    action: row.action,
    target: { type: row.target_type, id: row.target_id, siteId: row.site_id },
    changes: row.changes as ActivityEntry['changes'],
    request:
      row.request_id === null
        ? null
        : { id: row.request_id, address: row.request_address, userAgent: row.request_user_agent, idempotencyKey: row.idempotency_key },
  }))
  const last = entries.at(-1)
  return { entries, nextCursor: rows.length > filter.limit && last ? activityCursor(last.id) : null }
}
