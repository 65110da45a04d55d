import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { accountLimits } from '../accounts/object-limits.js'
import { channelHistory, createChannel, deleteChannel, getChannel, listChannels, updateChannel } from '../channels/channels.js'
import { DESTINATION_KINDS, FORMATS, VALIDATION_MODES } from '../channels/channel-input.js'
import { releaseHeldExport } from '../exports/release-export.js'
import { baseOf, type PlatformDeps } from './deps.js'
import { ChannelOut, ChannelWithHistory, channelView, historyView } from './channel-views.js'
import { Envelope, NullableBoolean, NullableOneOf, NullableString, SiteParams, SuccessBody, errorResponses, writeErrorResponses } from './schemas.js'
import { accountOf } from '../auth/caller.js'
import { IdempotencyHeaders, answerOnce } from '../http/idempotent-answer.js'

// Channels (docs/interface.md "Channel", docs/design.md 5.8): reads as the specification has them; writes are this
// product's own, in the same envelope.

// SFTP and FTPS destinations (checked by src/channels/file-destination-input.ts, which names the field of any mistake).
const FileServerFields = {
  host: Type.Optional(Type.Unknown({ description: 'sftp, ftps: the server' })),
  // Not an integer: port() (src/input/server-fields.ts) takes digits only and "" as the default; coercion would take true or " 22".
  port: Type.Optional(Type.Unknown({ description: 'default 22 (sftp), 21 (ftps)' })),
  user: Type.Optional(Type.Unknown()),
  password: Type.Optional(Type.Unknown({ description: 'write-only; left out on a change, the stored one stays' })),
  private_key: Type.Optional(Type.Unknown({ description: 'sftp: an OpenSSH or PEM private key, write-only' })),
  passphrase: Type.Optional(Type.Unknown({ description: "the private key's passphrase, write-only" })),
  host_key_sha256: Type.Optional(Type.Unknown({ description: "sftp, required: the server's host key, SHA256:<base64> as ssh-keygen -l prints it" })),
  directory: Type.Optional(Type.Unknown({ description: 'the remote directory; default the login directory' })),
  // insecure, temp_rename: not NullableBoolean, whose coercion takes "true" and 1; flag() (server-fields.ts) takes true or false only.
  insecure: Type.Optional(Type.Unknown({ description: 'ftps: true allows plain FTP without TLS' })),
  tls_certificate_sha256: Type.Optional(Type.Unknown({ description: "ftps: pins the server's certificate (AB:CD:…); default: the system's authorities" })),
  temp_rename: Type.Optional(Type.Unknown({ description: 'default true: upload under a temporary name, then rename' })),
}
const ChannelBody = Type.Object({
  name: Type.Optional(NullableString()),
  export_name: Type.Optional(NullableString({ description: 'the export template; channels sharing it run together with action export' })),
  active: Type.Optional(NullableBoolean()),
  format: Type.Optional(NullableOneOf(FORMATS)),
  mapping: Type.Optional(Type.Unknown({ description: '[{"column":"g:id","source":"id"},{"column":"condition","value":"new"}]; empty: every stage column' })),
  filter: Type.Optional(NullableString({ description: 'SQL condition over the import stage, as in product reads' })),
  filenames: Type.Optional(Type.Unknown({ description: '[{"type":null|"new"|"modified"|"unchanged"|"deleted"|"skipped","filename":"feed-{date}.csv"}]' })),
  validation_mode: Type.Optional(NullableOneOf(VALIDATION_MODES)),
  // A string: readValidation (channel-input.ts) trims it, reads "" as none and says what ISO 4217 is.
  currency: Type.Optional(NullableString({ description: 'ISO 4217 code; "" removes it' })),
  // The shares and the count below take a number, a number as text, "" (off) or null (not given): read by readShare and
  // readCount (channel-safety-input.ts), since the validator's coercion would turn "" into null or true into 1.
  readiness_threshold: Type.Optional(Type.Unknown({ description: 'a share from 0 to 1; "" removes it' })),
  safety_max_drop: Type.Optional(Type.Unknown({ description: 'a share from 0 to 1 (default 0.5); "" turns it off' })),
  safety_max_left_out: Type.Optional(Type.Unknown({ description: 'a share from 0 to 1 (default 0.5); "" turns it off' })),
  safety_min_products: Type.Optional(Type.Unknown({ description: 'a whole number of products (default 100); "" turns it off' })),
  destinations: Type.Optional(
    Type.Union([
      Type.Array(
        Type.Object({
          type: Type.Optional(NullableOneOf(DESTINATION_KINDS)),
          name: Type.Optional(NullableString()),
          active: Type.Optional(NullableBoolean()),
          url: Type.Optional(NullableString({ description: 'http: where each file is POSTed' })),
          ...FileServerFields,
        }),
      ),
      Type.Null(),
    ]),
  ),
})
const ChannelParams = Type.Object({ siteId: Type.String(), channelId: Type.String() })
const ReleaseBody = Type.Union([
  Type.Object({ pid: Type.Optional(NullableString({ description: 'the run whose held export to release: a 409 when the hold is of another' })) }),
  Type.Null(),
])
const tags = ['channels']

export const channelRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, deps) => {
  const { db } = deps
  const limits = accountLimits(deps.config)
  const connectors = { guard: deps.outbound, credentials: deps.credentials }
  const Channels = Envelope('Channels', ChannelOut)
  const createResponses = { 201: Channels, ...writeErrorResponses }
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
  const history = {
    operationId: 'getChannelHistory',
    tags,
    params: ChannelParams,
    response: { 200: Envelope('Channels', ChannelWithHistory), ...errorResponses },
  }
  app.get('/sites/:siteId/channels/:channelId/history', { schema: history }, async (request) => {
    const { details, history } = await channelHistory(db, accountOf(request), request.params.siteId, request.params.channelId)
    return { success: true as const, Channels: [{ ...channelView(details, baseOf(request, deps)), history: history.map(historyView) }] }
  })
  app.post(
    '/sites/:siteId/channels',
    {
      schema: { operationId: 'createChannel', tags, headers: IdempotencyHeaders, params: SiteParams, body: ChannelBody, response: createResponses },
    },
    async (request, reply) =>
      answerOnce(request, reply, deps, {
        run: () => createChannel(db, accountOf(request), request.params.siteId, request.body, limits, connectors),
        render: (created) => ({ status: 201, body: { success: true as const, Channels: [channelView(created, baseOf(request, deps))] } }),
      }),
  )
  app.put(
    '/sites/:siteId/channels/:channelId',
    { schema: { operationId: 'updateChannel', tags, params: ChannelParams, body: ChannelBody, response: { 200: Channels, ...writeErrorResponses } } },
    async (request) => {
      const updated = await updateChannel(db, accountOf(request), request.params.siteId, request.params.channelId, request.body, connectors)
      return { success: true as const, Channels: [channelView(updated, baseOf(request, deps))] }
    },
  )
  const release = { operationId: 'releaseHeldExport', tags, params: ChannelParams, body: ReleaseBody, response: { 200: Channels, ...writeErrorResponses } }
  app.post('/sites/:siteId/channels/:channelId/release', { schema: release }, async (request) => {
    const { siteId, channelId } = request.params
    const context = {
      storage: deps.feedStorage,
      limits: { feedMaxBytes: deps.config.FEED_MAX_BYTES },
      now: deps.clock,
      onHookError: (error: unknown) => request.log.warn({ err: error }, 'the feed files a release replaced could not be removed'),
    }
    const released = await releaseHeldExport(db, context, { accountId: accountOf(request), siteSegment: siteId, channelId, pid: request.body?.pid })
    return { success: true as const, Channels: [channelView(released, baseOf(request, deps))] }
  })
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
