import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { accountLimits } from '../accounts/object-limits.js'
import { channelHistory, createChannel, deleteChannel, getChannel, listChannels, updateChannel, type ChannelDetails } from '../channels/channels.js'
import type { ChannelExport } from '../db/schema.js'
import { feedUrl } from '../feeds/feed-urls.js'
import { formatTimestamp, links } from './envelope.js'
import { baseOf, type PlatformDeps } from './deps.js'
import { Envelope, Links, NullableBoolean, NullableString, SiteParams, SuccessBody, errorResponses, writeErrorResponses } from './schemas.js'
import { accountOf } from '../auth/caller.js'

// Channels (docs/interface.md "Channel", docs/design.md 5.8): reads as the specification has them; writes are this
// product's own, in the same envelope.

const Destination = Type.Object({
  destination_id: Type.Integer({ description: '1 = served by the platform (feed URL), 2 = HTTP POST' }),
  name: Type.Union([Type.String(), Type.Null()]),
  destination_name: Type.Union([Type.String(), Type.Null()]),
  active: Type.Boolean(),
  urls: Type.Array(Type.String()),
})
const Filename = Type.Object({ type: Type.Union([Type.String(), Type.Null()]), filename: Type.String() })
const Mapping = Type.Array(Type.Record(Type.String(), Type.String()))
const ChannelOut = Type.Object({
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
  links: Links,
})
const HistoryEntry = Type.Record(Type.String(), Type.String())
const ChannelWithHistory = Type.Intersect([ChannelOut, Type.Object({ history: Type.Array(HistoryEntry) })])
const ChannelBody = Type.Object({
  name: Type.Optional(NullableString()),
  export_name: Type.Optional(NullableString({ description: 'the export template; channels sharing it run together with action export' })),
  active: Type.Optional(NullableBoolean()),
  format: Type.Optional(NullableString({ enum: ['csv', 'tsv', 'ndjson', 'xml', null] })),
  mapping: Type.Optional(Type.Unknown({ description: '[{"column":"g:id","source":"id"},{"column":"condition","value":"new"}]; empty: every stage column' })),
  filter: Type.Optional(NullableString({ description: 'SQL condition over the import stage, as in product reads' })),
  filenames: Type.Optional(Type.Unknown({ description: '[{"type":null|"new"|"modified"|"unchanged"|"deleted"|"skipped","filename":"feed-{date}.csv"}]' })),
  validation_mode: Type.Optional(NullableString({ enum: ['exclude', 'warn_only', null] })),
  currency: Type.Optional(NullableString({ description: 'ISO 4217 code; "" removes it' })),
  readiness_threshold: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Null()], { description: 'a share from 0 to 1; "" removes it' })),
  destinations: Type.Optional(
    Type.Union([
      Type.Array(
        Type.Object({
          type: Type.Optional(NullableString({ enum: ['feed', 'http', null] })),
          name: Type.Optional(NullableString()),
          active: Type.Optional(NullableBoolean()),
          url: Type.Optional(NullableString()),
        }),
      ),
      Type.Null(),
    ]),
  ),
})
const ChannelParams = Type.Object({ siteId: Type.String(), channelId: Type.String() })
const tags = ['channels']

function channelView({ channel, destinations, files }: ChannelDetails, base: string) {
  const feed_destinations: Record<string, { destination_id: number; name: string | null; destination_name: string | null; active: boolean; urls: string[] }> =
    {}
  for (const d of destinations) {
    const destinationName = d.kind === 'feed' ? 'Feed URL' : 'HTTP POST'
    feed_destinations[d.id] = {
      destination_id: d.kind === 'feed' ? 1 : 2,
      name: d.name ?? destinationName,
      destination_name: destinationName,
      active: d.active,
      urls: d.kind === 'feed' && d.token ? files.map((f) => feedUrl(base, d.token ?? '', f.filename)) : [],
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

function historyView(entry: ChannelExport): Record<string, string> {
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

export const channelRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, deps) => {
  const { db } = deps
  const limits = accountLimits(deps.config)
  const Channels = Envelope('Channels', ChannelOut)
  app.get(
    '/sites/:siteId/channels',
    { schema: { operationId: 'listChannels', tags, params: SiteParams, response: { 200: Channels, ...errorResponses } } },
    async (request) => {
      const found = await listChannels(db, accountOf(request), request.params.siteId)
      return { success: true as const, Channels: found.map((c) => channelView(c, baseOf(request, deps))) }
    },
  )
  app.get(
    '/sites/:siteId/channels/:channelId',
    { schema: { operationId: 'getChannel', tags, params: ChannelParams, response: { 200: Channels, ...errorResponses } } },
    async (request) => {
      const found = await getChannel(db, accountOf(request), request.params.siteId, request.params.channelId)
      return { success: true as const, Channels: [channelView(found, baseOf(request, deps))] }
    },
  )
  app.get(
    '/sites/:siteId/channels/:channelId/history',
    {
      schema: { operationId: 'getChannelHistory', tags, params: ChannelParams, response: { 200: Envelope('Channels', ChannelWithHistory), ...errorResponses } },
    },
    async (request) => {
      const { details, history } = await channelHistory(db, accountOf(request), request.params.siteId, request.params.channelId)
      return { success: true as const, Channels: [{ ...channelView(details, baseOf(request, deps)), history: history.map(historyView) }] }
    },
  )
  app.post(
    '/sites/:siteId/channels',
    { schema: { operationId: 'createChannel', tags, params: SiteParams, body: ChannelBody, response: { 201: Channels, ...writeErrorResponses } } },
    async (request, reply) => {
      const created = await createChannel(db, accountOf(request), request.params.siteId, request.body, limits, deps.outbound)
      return reply.code(201).send({ success: true as const, Channels: [channelView(created, baseOf(request, deps))] })
    },
  )
  app.put(
    '/sites/:siteId/channels/:channelId',
    { schema: { operationId: 'updateChannel', tags, params: ChannelParams, body: ChannelBody, response: { 200: Channels, ...writeErrorResponses } } },
    async (request) => {
      const updated = await updateChannel(db, accountOf(request), request.params.siteId, request.params.channelId, request.body, deps.outbound)
      return { success: true as const, Channels: [channelView(updated, baseOf(request, deps))] }
    },
  )
  app.delete(
    '/sites/:siteId/channels/:channelId',
    { schema: { operationId: 'deleteChannel', tags, params: ChannelParams, response: { 200: SuccessBody, ...errorResponses } } },
    async (request) => {
      await deleteChannel(db, deps.feedStorage, accountOf(request), request.params.siteId, request.params.channelId, {
        onHookError: (error) => request.log.warn({ err: error }, 'the feed files of a deleted channel could not be removed'),
      })
      return { success: true as const }
    },
  )
}
