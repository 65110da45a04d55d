import { sql } from 'kysely'
import { lockKeysForTransaction, type LockedTransaction } from '../db/advisory-locks.js'
import type { CheckTotals } from '../db/schema.js'
import type { DbHandle } from '../db/database.js'
import type { Channel, ChannelHold, FeedFormat, Run, Site } from '../db/schema.js'
import { channelStage, IMPORT_STAGE, inStage } from '../db/stage-keys.js'
import { referralOf, type Referral } from '../db/referred-data.js'
import type { RenderedFormat } from '../feeds/feed-sql.js'

// Data access of the exports: the channels a run exports, the channel stage's bookkeeping, the
// feed_file rows that name a channel's current files, and the history of a failed export.

/** A site's channels an export action names (one channel, those of an export template, or all), in id order. */
export async function channelsOfRun(db: DbHandle, site: Site, run: Pick<Run, 'action' | 'target_id'>): Promise<Channel[]> {
  let query = db.selectFrom('channel').selectAll().where('account_id', '=', site.account_id).where('site_id', '=', site.id).orderBy('id')
  if (run.action === 'channel') query = query.where('id', '=', run.target_id ?? '0')
  else if (run.action === 'export') query = query.where('template_id', '=', run.target_id ?? '0')
  return query.execute()
}

/** The ids of every channel of a site. */
export async function siteChannelIds(db: DbHandle, site: Pick<Site, 'id' | 'account_id'>): Promise<string[]> {
  const channels = await db.selectFrom('channel').select('id').where('account_id', '=', site.account_id).where('site_id', '=', site.id).execute()
  return channels.map((channel) => channel.id)
}

/**
 * The site's import stage as an export reads it: its columns and recipe, its build, and the first
 * build stage_change has every change after (see build-stage.ts). None before its first import.
 */
export interface ImportStage {
  columns: string[]
  recipe: string
  build: string
  changesFrom: string
}

export async function importStageOf(db: DbHandle, siteId: string): Promise<ImportStage | undefined> {
  const stage = await db
    .selectFrom('site_stage')
    .select(['columns', 'recipe', 'build', 'changes_from'])
    .where(inStage('site_stage', siteId, IMPORT_STAGE))
    .executeTakeFirst()
  return stage && { columns: stage.columns, recipe: stage.recipe, build: stage.build, changesFrom: stage.changes_from }
}

// The first key of the channel-export advisory lock: a number of our own, so it meets no other lock.
const CHANNEL_EXPORT_LOCK = 7302

/**
 * Makes the exports of one channel take turns (a release beside a run's export), and keeps the
 * site's import stage from being rebuilt under the export (a build locks its row FOR UPDATE).
 */
export async function lockChannelExport(trx: LockedTransaction, site: Site, channelId: string): Promise<void> {
  await lockKeysForTransaction(trx, CHANNEL_EXPORT_LOCK, [channelId])
  await trx
    .selectFrom('site_stage')
    .select('site_id')
    .where(inStage('site_stage', site.id, IMPORT_STAGE))
    .forShare()
    .execute()
}

/** The channel's hold as it is now (under the export's lock). */
export async function currentHold(db: DbHandle, channel: Pick<Channel, 'id' | 'account_id'>): Promise<ChannelHold | null> {
  const row = await db.selectFrom('channel').select('hold').where('account_id', '=', channel.account_id).where('id', '=', channel.id).executeTakeFirst()
  return row?.hold ?? null
}

/** Puts a hold on the channel, or ends it (null). */
export async function setChannelHold(db: DbHandle, channel: Pick<Channel, 'id' | 'account_id'>, hold: ChannelHold | null): Promise<void> {
  await db
    .updateTable('channel')
    .set({ hold: hold === null ? null : JSON.stringify(hold) })
    .where('account_id', '=', channel.account_id)
    .where('id', '=', channel.id)
    .execute()
}

/** What the previous export left in the channel stage; none before the first. */
export interface ChannelStageState {
  rows: number
  lineBytes: number
  /** The import build it was exported from. */
  build: string
  signature: string | null
  /** The counts of its rows' checks; null before the first export that kept them. */
  checks: CheckTotals | null
  /** How its clean rows refer to the import stage's rows for their data, when they do (see ExportPlan.referral). */
  referral: Referral | undefined
  /** Its lines are rendered when read, in this format (see ExportPlan.linesOnRead). */
  linesOnRead: RenderedFormat | null
  /** The columns and format its lines were made with (format null: not kept when it was saved). */
  columns: string[]
  format: FeedFormat | null
}

export async function channelStageState(db: DbHandle, siteId: string, channelId: string): Promise<ChannelStageState | undefined> {
  const stage = await db
    .selectFrom('site_stage')
    .select(['row_count', 'line_bytes', 'build', 'signature', 'checks', 'refers_to_import', 'refers_mapping', 'line_format', 'columns', 'format'])
    .where(inStage('site_stage', siteId, channelStage(channelId)))
    .executeTakeFirst()
  return (
    stage && {
      rows: Number(stage.row_count),
      lineBytes: Number(stage.line_bytes),
      build: stage.build,
      signature: stage.signature,
      checks: stage.checks,
      referral: referralOf(stage),
      linesOnRead: stage.line_format,
      columns: stage.columns,
      format: stage.format,
    }
  )
}

/** The channel stage's columns, size and provenance, as this export leaves them. */
export async function saveChannelStage(
  db: DbHandle,
  site: Site,
  channelId: string,
  stage: Omit<ChannelStageState, 'signature' | 'checks' | 'format'> & { signature: string; checks: CheckTotals; format: FeedFormat },
): Promise<void> {
  const { columns, rows, lineBytes, build, signature, checks, referral, linesOnRead, format } = stage
  const key = channelStage(channelId)
  const refersMapping = referral?.mapping ? JSON.stringify(referral.mapping) : null
  await sql`INSERT INTO site_stage (site_id, stage, stage_id, account_id, columns, row_count, recipe, line_bytes, build, signature, checks, refers_to_import,
        refers_mapping, line_format, format)
      VALUES (${site.id}, ${key.stage}, ${key.stageId}, ${site.account_id}, ${columns}::text[], ${rows}, '', ${lineBytes}, ${build}, ${signature},
        ${JSON.stringify(checks)}::jsonb, ${referral !== undefined}, ${refersMapping}::jsonb, ${linesOnRead}, ${format})
      ON CONFLICT (site_id, stage, stage_id) DO UPDATE SET columns = excluded.columns, row_count = excluded.row_count,
        line_bytes = excluded.line_bytes, build = excluded.build, signature = excluded.signature, checks = excluded.checks,
        refers_to_import = excluded.refers_to_import, refers_mapping = excluded.refers_mapping, line_format = excluded.line_format,
        format = excluded.format,
        updated_at = now()`.execute(db)
}

/** One file an export wrote, as its feed_file row records it. */
export interface FeedFileRecord {
  filename: string
  storageKey: string
  contentType: string
  bytes: number
  etag: string
  /**
   * A full file: the channel stage's lines between this header and footer, written already by its
   * export or (`pending`) on its first download; written again from them should the storage lose it.
   */
  full?: { siteId: string; header: string; footer: string; pending: boolean }
}

/**
 * Makes `files` (in order) the channel's files. Returns the storage keys of the files they replace
 * that none of them reuses: nothing names those once the transaction commits.
 */
export async function replaceFeedFileRows(db: DbHandle, accountId: string, channelId: string, files: FeedFileRecord[], writtenAt: Date): Promise<string[]> {
  const replaced = await db.deleteFrom('feed_file').where('account_id', '=', accountId).where('channel_id', '=', channelId).returning('storage_key').execute()
  if (files.length > 0) {
    await db
      .insertInto('feed_file')
      .values(
        files.map((file, position) => ({
          account_id: accountId,
          channel_id: channelId,
          position,
          filename: file.filename,
          storage_key: file.storageKey,
          content_type: file.contentType,
          bytes: file.bytes,
          etag: file.etag,
          written_at: writtenAt,
          pending: file.full?.pending ?? false,
          site_id: file.full?.siteId ?? null,
          header: file.full?.header ?? '',
          footer: file.full?.footer ?? '',
        })),
      )
      .execute()
  }
  const kept = new Set(files.map((file) => file.storageKey))
  return replaced.map((row) => row.storage_key).filter((key) => !kept.has(key))
}

/** The history entry of an export that failed: no counts, nothing uploaded. */
export async function recordFailedExport(
  db: DbHandle,
  entry: { account_id: string; site_id: string; channel_id: string; pid: string; export_start: Date; export_time: Date },
): Promise<void> {
  await db
    .insertInto('channel_export')
    .values({
      ...entry,
      process_status: 'failed',
      product_count: 0,
      product_count_now: 0,
      product_count_previous: 0,
      product_count_new: 0,
      product_count_modified: 0,
      product_count_deleted: 0,
      product_count_unchanged: 0,
      product_count_skipped: 0,
      uploaded: 0,
    })
    .execute()
}
