import { Type, type Static } from '@sinclair/typebox'
import type { ChannelDetails } from '../channels/channels.js'
import type { ChannelExport, ChannelHold } from '../db/schema.js'
import { feedUrl } from '../feeds/feed-urls.js'
import { formatTimestamp, links } from './envelope.js'
import { Links } from './schemas.js'

// Channels as the platform interface shows them (docs/interface.md "Channel"): the specification's
// fields, this product's own (template, safety stops, hold) beside them.

const FileServer = Type.Object(
  {
    host: Type.String(),
    port: Type.Integer(),
    user: Type.String(),
    directory: Type.String(),
    host_key_sha256: Type.Optional(Type.String({ description: 'SFTP: the host key the server must present' })),
    insecure: Type.Optional(Type.Boolean({ description: 'FTPS: true when plain FTP (no TLS) is allowed' })),
    tls_certificate_sha256: Type.Optional(Type.String({ description: "FTPS: the server's certificate, pinned" })),
    temp_rename: Type.Boolean({ description: 'uploaded under a temporary name, then renamed into place' }),
    credentials: Type.Literal('stored', { description: 'credentials are write-only: never shown' }),
  },
  { description: 'SFTP and FTPS destinations: where files are uploaded' },
)
const Destination = Type.Object({
  destination_id: Type.Integer({ description: '1 = served by the platform (feed URL), 2 = HTTP POST, 3 = SFTP, 4 = FTPS' }),
  name: Type.Union([Type.String(), Type.Null()]),
  destination_name: Type.Union([Type.String(), Type.Null()]),
  active: Type.Boolean(),
  urls: Type.Array(Type.String()),
  server: Type.Optional(FileServer),
})
const DESTINATION_KINDS = { feed: [1, 'Feed URL'], http: [2, 'HTTP POST'], sftp: [3, 'SFTP'], ftps: [4, 'FTPS'] } as const
const Filename = Type.Object({ type: Type.Union([Type.String(), Type.Null()]), filename: Type.String() })
const Mapping = Type.Array(Type.Record(Type.String(), Type.String()))
const Hold = Type.Object({
  pid: Type.String({ description: 'the run whose export was held' }),
  reason: Type.String({ enum: ['drop', 'left_out'] }),
  message: Type.String(),
  held_at: Type.String({ description: 'ISO 8601' }),
  products: Type.Integer({ description: 'products the held file would hold' }),
  products_previous: Type.Union([Type.Integer(), Type.Null()], { description: 'products the delivered file holds; null before any' }),
  products_checked: Type.Integer(),
  products_left_out: Type.Integer(),
  threshold: Type.Number({ description: 'the setting the export passed: safety_max_drop or safety_max_left_out' }),
  min_products: Type.Integer(),
  links: Links,
})
export const ChannelOut = Type.Object({
  id: Type.String(),
  site_id: Type.String(),
  channel_id: Type.String(),
  name: Type.String(),
  export_name: Type.String(),
  active: Type.Boolean(),
  format: Type.String(),
  mapping: Mapping,
  filter: Type.String(),
  filename: Type.Union([Type.String(), Type.Null()]),
  filenames: Type.Array(Filename),
  feed_destinations: Type.Record(Type.String(), Destination),
  template: Type.String({ description: 'the built-in template export_name picked: generic, google_shopping, meta_catalog, idealo' }),
  validation_mode: Type.String({ description: 'exclude: a product failing a required rule is left out of the feed; warn_only: exported with its errors' }),
  currency: Type.Union([Type.String(), Type.Null()], { description: 'ISO 4217 code a bare-number price gets where the template reads both forms' }),
  readiness_threshold: Type.Union([Type.Number(), Type.Null()], { description: 'channel.readiness_changed fires when the readiness score crosses it' }),
  safety_max_drop: Type.Union([Type.Number(), Type.Null()], {
    description: 'an export whose file would drop more than this share of the delivered one is held; null: off',
  }),
  safety_max_left_out: Type.Union([Type.Number(), Type.Null()], {
    description: 'an export whose template would leave out more than this share of the products it checked is held; null: off',
  }),
  safety_min_products: Type.Union([Type.Integer(), Type.Null()], { description: 'neither stop applies to a baseline of fewer products; null: none' }),
  export_status: Type.String({
    enum: ['not_exported', 'published', 'held'],
    description: "held: a safety stop held the last export, and the last published one's files keep serving",
  }),
  hold: Type.Union([Hold, Type.Null()], { description: 'the held export: why, its figures, and how to release it; null when none' }),
  links: Links,
})
export const HistoryEntry = Type.Record(Type.String(), Type.String())
export const ChannelWithHistory = Type.Intersect([ChannelOut, Type.Object({ history: Type.Array(HistoryEntry) })])

export function channelView({ channel, destinations, files, exportStatus }: ChannelDetails, base: string) {
  const feed_destinations: Record<string, Static<typeof Destination>> = {}
  for (const d of destinations) {
    const [destinationId, destinationName] = DESTINATION_KINDS[d.kind]
    feed_destinations[d.id] = {
      destination_id: destinationId,
      name: d.name ?? destinationName,
      destination_name: destinationName,
      active: d.active,
      urls: d.kind === 'feed' && d.token ? files.map((f) => feedUrl(base, d.token ?? '', f.filename)) : [],
      ...(d.settings && { server: { ...d.settings, credentials: 'stored' as const } }),
    }
  }
  const self = `/platform/v2/sites/${channel.site_id}/channels/${channel.id}`
  return {
    id: channel.id,
    site_id: channel.site_id,
    channel_id: channel.template_id,
    name: channel.name,
    export_name: channel.export_name,
    active: channel.active,
    format: channel.format,
    mapping: channel.mapping.map((m): Record<string, string> =>
      'source' in m ? { column: m.column, source: m.source } : { column: m.column, value: m.value },
    ),
    filter: channel.filter,
    filename: channel.filenames[0]?.filename ?? null,
    filenames: channel.filenames,
    feed_destinations,
    template: channel.template,
    validation_mode: channel.validation_mode,
    currency: channel.currency,
    readiness_threshold: channel.readiness_threshold === null ? null : Number(channel.readiness_threshold),
    safety_max_drop: channel.safety_max_drop === null ? null : Number(channel.safety_max_drop),
    safety_max_left_out: channel.safety_max_left_out === null ? null : Number(channel.safety_max_left_out),
    safety_min_products: channel.safety_min_products,
    export_status: exportStatus,
    hold: channel.hold === null ? null : holdView(channel.hold, base, self),
    links: links(base, {
      self,
      history: `${self}/history`,
      diagnostics: `${self}/diagnostics`,
      template: `/platform/v2/export_templates/${channel.template}`,
      site: `/platform/v2/sites/${channel.site_id}`,
      products: `/product/v2/site/${channel.site_id}/stage/channel/${channel.id}`,
    }),
  }
}

export function historyView(entry: ChannelExport): Record<string, string> {
  return {
    id: entry.id,
    site_id: entry.site_id,
    site_channel_id: entry.channel_id,
    export_start: formatTimestamp(entry.export_start),
    export_time: formatTimestamp(entry.export_time),
    product_count: String(entry.product_count),
    product_count_now: String(entry.product_count_now),
    product_count_previous: String(entry.product_count_previous),
    product_count_new: String(entry.product_count_new),
    product_count_modified: String(entry.product_count_modified),
    product_count_deleted: String(entry.product_count_deleted),
    product_count_unchanged: String(entry.product_count_unchanged),
    product_count_skipped: String(entry.product_count_skipped),
    process_status: entry.process_status,
    pid: entry.pid,
    uploaded: String(entry.uploaded),
  }
}

function holdView(hold: ChannelHold, base: string, self: string) {
  const { pid, reason, message, held_at, products, products_previous, products_checked, products_left_out, threshold, min_products } = hold
  return {
    ...{ pid, reason, message, held_at, products, products_previous, products_checked, products_left_out, threshold, min_products },
    links: links(base, { release: `${self}/release`, history: `${self}/history`, diagnostics: `${self}/diagnostics` }),
  }
}
