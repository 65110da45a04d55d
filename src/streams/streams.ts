import { sql } from 'kysely'
import type { Db, DbHandle } from '../db/database.js'
import { inTransaction } from '../db/transaction.js'
import { isUniqueViolation } from '../db/errors.js'
import type { Stream, StreamStatus, StreamType } from '../db/schema.js'
import { ConflictError, NotFoundError, UnprocessableError } from '../errors.js'
import { isId } from '../db/ids.js'
import { recordEvent } from '../webhooks/outbox.js'
import { streamStatusChangedData } from '../webhooks/payloads.js'
import { changesBetween } from '../activity/activity-changes.js'
import { recordActivity } from '../activity/activity-store.js'
import { settleRequestClaim } from '../activity/request-scope.js'

export const MAX_STREAMS_PER_ACCOUNT = 100
export const NAME_RESERVATION_DAYS = 7
export const STREAM_STATUSES: readonly StreamStatus[] = ['active', 'disabled', 'locked', 'locked_upload', 'locked_processing']
const STREAM_TYPES: readonly StreamType[] = ['chunked', 'referenced']

export interface StreamInput {
  name?: unknown
  type?: unknown
  /** The account named by the document's relationship, when it names one. */
  accountId?: string
}

export async function createStream(db: Db, accountId: string, input: StreamInput, now: Date): Promise<Stream> {
  const name = readName(input.name)
  const type = input.type === undefined || input.type === null ? 'chunked' : input.type
  if (!STREAM_TYPES.includes(type as StreamType)) throw new UnprocessableError(`type: must be one of ${STREAM_TYPES.join(', ')}`)
  checkAccount(accountId, input.accountId)

  return inTransaction(db, async (tx) => {
    const trx = tx.db
    // One creator at a time per account, so that the 100-stream limit cannot be raced past.
    await trx.selectFrom('account').select('id').where('id', '=', accountId).forUpdate().executeTakeFirst()
    await purgeDeletedStreams(trx, now, accountId)
    const live = await trx
      .selectFrom('stream')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .where('source_owned', '=', false)
      .executeTakeFirstOrThrow()
    if (Number(live.count) >= MAX_STREAMS_PER_ACCOUNT) {
      throw new UnprocessableError(`An account can have at most ${MAX_STREAMS_PER_ACCOUNT} streams; delete one before creating another`)
    }
    await assertNameFree(trx, accountId, name)
    const stream = await trx
      .insertInto('stream')
      .values({ account_id: accountId, name, type: type as StreamType, content_type: null, created_at: now, updated_at: now, deleted_at: null })
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch(async (error: unknown) => {
        if (isUniqueViolation(error)) await assertNameFree(trx, accountId, name)
        throw error
      })
    await recordActivity(trx, { accountId, action: 'stream.created', target: streamTarget(stream), changes: changesBetween(null, stream) })
    await settleRequestClaim(tx, stream)
    return stream
  })
}

function streamTarget(stream: Stream) {
  return { type: 'stream', id: stream.id }
}

export async function getStream(db: DbHandle, accountId: string, streamId: string): Promise<Stream> {
  const stream = isId(streamId)
    ? await db
        .selectFrom('stream')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('id', '=', streamId)
        .where('deleted_at', 'is', null)
        // A fetched source's own stream is no stream of the interface: only its source writes to it.
        .where('source_owned', '=', false)
        .executeTakeFirst()
    : undefined
  if (!stream) throw new NotFoundError(`Stream ${streamId} not found`)
  return stream
}

export async function listStreams(db: DbHandle, accountId: string, offset: number, limit: number) {
  const live = db.selectFrom('stream').where('account_id', '=', accountId).where('deleted_at', 'is', null).where('source_owned', '=', false)
  const [streams, total] = await Promise.all([
    live.selectAll().orderBy('id').offset(offset).limit(limit).execute(),
    live.select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow(),
  ])
  return { streams, total: Number(total.count) }
}

export async function renameStream(db: Db, accountId: string, streamId: string, input: StreamInput & { id?: unknown }, now: Date): Promise<Stream> {
  const stream = await getStream(db, accountId, streamId)
  if (input.id !== undefined && String(input.id) !== stream.id) {
    throw new ConflictError(`data.id ${String(input.id)} does not match the stream in the path (${stream.id})`)
  }
  if (input.type !== undefined && input.type !== stream.type) {
    throw new UnprocessableError("A stream's type cannot be changed; create a new stream of the other type and send the full catalog to it")
  }
  if (input.accountId !== undefined && input.accountId !== accountId) {
    throw new UnprocessableError('A stream cannot be moved to another account; create a new stream there')
  }
  if (input.name === undefined) return stream
  const name = readName(input.name)
  if (name === stream.name) return stream
  return inTransaction(db, async ({ db: trx }) => {
    await purgeDeletedStreams(trx, now, accountId)
    await assertNameFree(trx, accountId, name)
    const renamed = await trx
      .updateTable('stream')
      .set({ name, updated_at: now })
      .where('account_id', '=', accountId)
      .where('id', '=', stream.id)
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((error: unknown) => {
        // Another request took the name between the check and the update.
        throw isUniqueViolation(error) ? new ConflictError(`A stream named "${name}" already exists`) : error
      })
    await recordActivity(trx, { accountId, action: 'stream.updated', target: streamTarget(renamed), changes: changesBetween(stream, renamed) })
    return renamed
  })
}

/** The stream and its data disappear from every read at once; the row keeps the name for 7 days. */
export async function deleteStream(db: Db, accountId: string, streamId: string, now: Date): Promise<void> {
  await inTransaction(db, async ({ db: trx }) => {
    const stream = await getStream(trx, accountId, streamId)
    // A concurrent delete of the same stream took it first (this one waited for its row): a 404, as after it.
    const deleted = await trx
      .updateTable('stream')
      .set({ deleted_at: now, updated_at: now })
      .where('account_id', '=', accountId)
      .where('id', '=', stream.id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst()
    if (Number(deleted.numUpdatedRows) === 0) throw new NotFoundError()
    await recordActivity(trx, {
      accountId,
      action: 'stream.deleted',
      target: streamTarget(stream),
      changes: changesBetween(stream, null, { omit: ['deleted_at'] }),
    })
  })
}

/** Removes streams deleted more than 7 days ago, with everything they held. */
export async function purgeDeletedStreams(db: DbHandle, now: Date, accountId?: string): Promise<number> {
  const cutoff = new Date(now.getTime() - NAME_RESERVATION_DAYS * 86_400_000)
  let expired = db.selectFrom('stream').select('id').where('deleted_at', '<', cutoff)
  if (accountId !== undefined) expired = expired.where('account_id', '=', accountId)
  // batch_row and stream_product have no foreign key (it would slow every upload and import):
  // their rows go first, explicitly.
  await db
    .deleteFrom('batch_row')
    .where('batch_id', 'in', db.selectFrom('batch').select('id').where('stream_id', 'in', expired))
    .execute()
  await db.deleteFrom('stream_product').where('stream_id', 'in', expired).execute()
  const result = await db.deleteFrom('stream').where('id', 'in', expired).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Operators lock and unlock streams (docs/interface.md section 3); not reachable through the API. */
export async function setStreamStatus(db: Db, streamId: string, status: string, now: Date): Promise<Stream> {
  if (!STREAM_STATUSES.includes(status as StreamStatus)) throw new UnprocessableError(`status: must be one of ${STREAM_STATUSES.join(', ')}`)
  if (!isId(streamId)) throw new NotFoundError(`Stream ${streamId} not found`)
  return inTransaction(db, async (tx) => {
    const current = await tx.db.selectFrom('stream').selectAll().where('id', '=', streamId).where('deleted_at', 'is', null).forUpdate().executeTakeFirst()
    if (!current) throw new NotFoundError(`Stream ${streamId} not found`)
    const updated = await tx.db
      .updateTable('stream')
      .set({ status: status as StreamStatus, updated_at: now })
      .where('id', '=', streamId)
      .returningAll()
      .executeTakeFirstOrThrow()
    if (current.status !== updated.status) {
      await recordEvent(tx, updated.account_id, 'stream.status_changed', streamStatusChangedData(updated, current.status))
      const changes = changesBetween(current, updated)
      await recordActivity(tx.db, { accountId: updated.account_id, action: 'stream.status_changed', target: streamTarget(updated), changes })
    }
    return updated
  })
}

function readName(name: unknown): string {
  if (typeof name !== 'string') throw new UnprocessableError('name: is required and must be a string')
  const length = [...name].length
  if (length < 3 || length > 255) throw new UnprocessableError(`name: must be 3 to 255 characters long (got ${length})`)
  return name
}

function checkAccount(callerAccountId: string, documentAccountId: string | undefined): void {
  if (documentAccountId !== undefined && documentAccountId !== callerAccountId) {
    throw new NotFoundError(`Account ${documentAccountId} not found or not accessible with this token`)
  }
}

async function assertNameFree(db: DbHandle, accountId: string, name: string): Promise<void> {
  const taken = await db.selectFrom('stream').select(['id', 'deleted_at']).where('account_id', '=', accountId).where('name', '=', name).executeTakeFirst()
  if (!taken) return
  if (taken.deleted_at) {
    // The reserving stream is gone from every read, so there is nothing to point at.
    throw new ConflictError(`A stream named "${name}" was deleted less than ${NAME_RESERVATION_DAYS} days ago; its name stays reserved until then`)
  }
  throw new ConflictError(`A stream named "${name}" already exists`, {
    duplicate: { type: 'stream', id: taken.id, links: { self: `/streams/${taken.id}` } },
  })
}

/** A stream feeding a disabled site accepts no data (docs/design.md 5.5). */
export async function feedsDisabledSite(db: DbHandle, accountId: string, streamId: string): Promise<boolean> {
  const row = await db
    .selectFrom('data_source')
    .innerJoin('site', 'site.id', 'data_source.site_id')
    .select(sql<number>`1`.as('one'))
    .where('data_source.account_id', '=', accountId)
    .where('data_source.stream_id', '=', streamId)
    .where('site.status', '=', 'disabled')
    .executeTakeFirst()
  return row !== undefined
}
