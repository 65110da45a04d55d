import type { Insertable, Selectable } from 'kysely'
import type { AccountTable, PlatformCredentialTable, AccessTokenTable, ConsoleSessionTable, ConsoleKeyTable } from './tables/accounts.js'
import type { ActivityTable, IdempotencyKeyTable } from './tables/activity.js'
import type { RateLimitWindowTable } from './tables/counters.js'
import type { ProjectTable, SiteTable, SiteTagTable, SitePurgeTable, RunTable, ImportHistoryTable, SiteErrorTable, SiteScheduleTable } from './tables/sites.js'
import type { StreamTable, BatchTable, BatchRowTable, BatchPayloadTable, StreamProductTable } from './tables/streams.js'
import type { DataSourceTable } from './tables/sources.js'
import type { StageProductTable, StageChangeTable, SiteStageTable } from './tables/stages.js'
import type { FeedObjectTable, FeedChunkTable, FeedFileTable } from './tables/feeds.js'
import type {
  ExportTemplateTable,
  ChannelTable,
  RuleTable,
  ChannelDestinationTable,
  PushAttemptTable,
  ChannelExportTable,
  ChannelPushTable,
} from './tables/channels.js'
import type { WebhookTable, WebhookEventTable, WebhookDeliveryTable } from './tables/webhooks.js'

// The database as Kysely sees it: the table types of each part, in src/db/tables/ (one file per
// domain folder that owns the tables), assembled into one interface, with the row types the code
// passes around.
export type * from './tables/accounts.js'
export type * from './tables/activity.js'
export type * from './tables/counters.js'
export type * from './tables/sites.js'
export type * from './tables/streams.js'
export type * from './tables/sources.js'
export type * from './tables/stages.js'
export type * from './tables/feeds.js'
export type * from './tables/channels.js'
export type * from './tables/webhooks.js'

export interface Database {
  account: AccountTable
  platform_credential: PlatformCredentialTable
  access_token: AccessTokenTable
  console_session: ConsoleSessionTable
  console_key: ConsoleKeyTable
  activity: ActivityTable
  idempotency_key: IdempotencyKeyTable
  project: ProjectTable
  site: SiteTable
  site_tag: SiteTagTable
  stream: StreamTable
  batch: BatchTable
  batch_row: BatchRowTable
  batch_payload: BatchPayloadTable
  data_source: DataSourceTable
  stream_product: StreamProductTable
  stage_product: StageProductTable
  stage_change: StageChangeTable
  rate_limit_window: RateLimitWindowTable
  feed_object: FeedObjectTable
  feed_chunk: FeedChunkTable
  site_stage: SiteStageTable
  run: RunTable
  import_history: ImportHistoryTable
  site_error: SiteErrorTable
  site_schedule: SiteScheduleTable
  site_purge: SitePurgeTable
  export_template: ExportTemplateTable
  channel: ChannelTable
  rule: RuleTable
  channel_destination: ChannelDestinationTable
  feed_file: FeedFileTable
  channel_export: ChannelExportTable
  channel_push: ChannelPushTable
  push_attempt: PushAttemptTable
  webhook: WebhookTable
  webhook_event: WebhookEventTable
  webhook_delivery: WebhookDeliveryTable
}

export type Project = Selectable<ProjectTable>
export type Site = Selectable<SiteTable>
export type SiteTag = Selectable<SiteTagTable>
export type NewSite = Insertable<SiteTable>
export type AccessToken = Selectable<AccessTokenTable>
export type Stream = Selectable<StreamTable>
export type Batch = Selectable<BatchTable>
export type DataSource = Selectable<DataSourceTable>
export type Run = Selectable<RunTable>
export type SiteStage = Selectable<SiteStageTable>
export type SiteError = Selectable<SiteErrorTable>
export type ImportHistory = Selectable<ImportHistoryTable>
export type Channel = Selectable<ChannelTable>
export type ChannelDestination = Selectable<ChannelDestinationTable>
export type FeedFile = Selectable<FeedFileTable>
export type ChannelExport = Selectable<ChannelExportTable>
export type RuleRow = Selectable<RuleTable>
export type ChannelPush = Selectable<ChannelPushTable>
export type Webhook = Selectable<WebhookTable>
export type WebhookEvent = Selectable<WebhookEventTable>
export type WebhookDelivery = Selectable<WebhookDeliveryTable>
