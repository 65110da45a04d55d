import type { OperationDocs } from '../http/openapi.js'
import { SECRET, channel, channelHistoryEntry, delivery, envelope, heldChannel, webhook } from './openapi-examples.js'

// The OpenAPI docs of the channel and webhook operations (by operationId).

const deleted = { 200: { ok: { value: { success: true } } } }
const failed = (summary: string, message: string) => ({ [summary.replace(/\W+/g, '-').toLowerCase()]: { summary, value: { success: false, message } } })
const BOTH = ' Takes the X-Auth-Token or the bearer token.'

const CHANNEL_FIELDS =
  '`name` and `export_name` (the export template: channels of the account with the same name share its `channel_id`) are ' +
  'required; `format` is `csv` (default), `tsv`, `ndjson` or `xml` (RSS 2.0 items, `g:` names allowed); `mapping` lists output ' +
  'columns from a stage column (`source`) or a constant (`value`), empty for every column (at most 500); `filter` is a ' +
  'product-read condition over the import stage; `filenames` are templates with `{site_id}`, `{channel_id}`, `{date}`, a ' +
  '`type` of `new`, `modified`, `unchanged` or `deleted` writing only those rows, or `skipped` listing the products the ' +
  "channel's template left out (at most 10); `destinations` are `feed` (the " +
  'default: files served at an unguessable URL, listed in `urls`) and `http` (each file POSTed to a public `url` after the run). ' +
  'A channel is checked by the rules its export applies; a 400 names the field. An `export_name` that is a template name ' +
  '(`google_shopping`, `meta_catalog`, `idealo`) picks that template: its checks run in every export. `validation_mode` is ' +
  '`exclude` (default: a product failing a required rule is left out) or `warn_only`; `currency` (ISO 4217) is added to bare ' +
  'prices where the template reads both forms; `readiness_threshold` (0 to 1) makes `channel.readiness_changed` fire. ' +
  'Safety stops: an export whose file would hold fewer than (1 − `safety_max_drop`) × the products of the last delivered ' +
  'file, or whose template would leave out more than `safety_max_left_out` of the products it checked, is held (both 0 to 1, ' +
  'default 0.5); neither applies to a baseline below `safety_min_products` (default 100); `""` turns one off.'
const channelBody = {
  name: 'Google DE',
  export_name: 'google-shopping',
  format: 'csv',
  mapping: channel.mapping,
  filter: 'price > 0',
  filenames: channel.filenames,
  destinations: [{ type: 'feed' }],
}
const channelWithoutUrls = { ...channel, feed_destinations: { '1': { ...channel.feed_destinations['1'], urls: [] } } }

const WEBHOOK_FIELDS =
  '`url` must be https (http only where the operator allows it), public (the outbound guard refuses loopback, private and ' +
  'metadata addresses), at most 2,048 characters, without credentials. `events` is a list of `batch.uploaded`, ' +
  '`batch.processed`, `run.started`, `run.succeeded`, `run.failed`, `export.finished`, `export.held`, `stream.status_changed`, ' +
  '`channel.readiness_changed`, or `"all"` ' +
  '(the default). `description` at most 500 characters.'

export const channelDocs: Record<string, OperationDocs> = {
  listChannels: {
    summary: 'List the channels of a site',
    description: 'Every channel of the site, by id, with its destinations and the feed URLs of its last export.',
    responses: { 200: envelope('Channels', [channel]) },
  },
  getChannel: {
    summary: 'Read a channel',
    description:
      'One channel of the site; `feed_destinations.*.urls` lists one URL per exported file (none before the first export). ' +
      '`export_status` is `held` while a safety stop holds the last export (`hold` says why, with its figures), `published` ' +
      'once an export was published, `not_exported` before.',
    responses: { 200: { ...envelope('Channels', [channel], 'Published'), ...envelope('Channels', [heldChannel], 'Held by a safety stop') } },
  },
  getChannelHistory: {
    summary: 'Read the export history of a channel',
    description:
      'The channel with `history`: one entry per export, newest first, with the counts against the previous export ' +
      '(`product_count_new`, `_modified`, `_deleted`, `_unchanged`, `_now`, `_previous`) and `uploaded` "1" once every file ' +
      'reached every http destination.',
    responses: { 200: envelope('Channels', [{ ...channel, history: [channelHistoryEntry] }]) },
  },
  createChannel: {
    summary: 'Create a channel',
    description: `Adds a channel to the site. ${CHANNEL_FIELDS} At most \`MAX_CHANNELS_PER_ACCOUNT\` (5,000).`,
    request: {
      feed: { summary: 'CSV feed served by the platform', value: channelBody },
      http: {
        summary: 'NDJSON posted to an endpoint',
        value: { name: 'ERP', export_name: 'erp', format: 'ndjson', destinations: [{ type: 'http', url: 'https://erp.example.com/feeds' }] },
      },
    },
    responses: {
      201: envelope('Channels', [channelWithoutUrls]),
      400: failed('Invalid XML column', 'mapping[1].column: "xmlns" is not a valid XML element name for format xml'),
    },
  },
  updateChannel: {
    summary: 'Change a channel',
    description: `Changes the fields given; a field left out or null stays. ${CHANNEL_FIELDS}`,
    request: { deactivate: { value: { active: false } }, filter: { summary: 'Another filter', value: { filter: "price > 0 AND brand = 'Acme'" } } },
    responses: { 200: envelope('Channels', [{ ...channel, active: false }]) },
  },
  releaseHeldExport: {
    summary: 'Release the held export of a channel',
    description:
      'Publishes the export a safety stop held, as it was computed: the same run, its files under the same names, its counts ' +
      'against the last delivered file; the next export compares against it. One transaction: the feed serves the old file or ' +
      'the new one, never a mix. A 409 when the channel holds nothing, when `pid` names another run than the held one, when the ' +
      'site was imported again or the channel changed since (export it again), or when the site is not active. Answers the ' +
      'channel, `export_status` `published`.',
    request: { any: { summary: 'Whatever is held', value: {} }, pid: { summary: 'Only the export of this run', value: { pid: heldChannel.hold.pid } } },
    responses: {
      200: envelope('Channels', [channel]),
      409: failed('Nothing held', 'Channel 1 has no held export: nothing to release'),
    },
  },
  deleteChannel: {
    summary: 'Delete a channel',
    description: 'Deletes the channel with its stage and its feed files (downloads already started finish) and answers `{"success":true}`.',
    responses: deleted,
  },
  createWebhook: {
    summary: 'Subscribe to events',
    description:
      `Creates a webhook. ${WEBHOOK_FIELDS} **The secret is shown once**, in this answer: keep it to verify the ` +
      `\`webhook-signature\` of each delivery. At most \`MAX_WEBHOOKS_PER_ACCOUNT\` (20).${BOTH}`,
    request: {
      some: { value: { url: 'https://erp.example.com/catalog-events', events: ['batch.processed', 'run.succeeded', 'run.failed'], description: 'ERP' } },
      all: { summary: 'Every event', value: { url: 'https://erp.example.com/catalog-events', events: 'all' } },
    },
    responses: {
      201: envelope('Webhooks', [{ ...webhook, secret: SECRET }]),
      400: failed('Private address', 'url: https://10.0.0.5/hooks is not allowed: 10.0.0.5 is a private network address'),
    },
  },
  listWebhooks: {
    summary: 'List webhooks',
    description: `Every webhook of the account (never the secret).${BOTH}`,
    responses: { 200: envelope('Webhooks', [webhook]) },
  },
  getWebhook: {
    summary: 'Read a webhook',
    description: `One webhook of the account (never the secret).${BOTH}`,
    responses: { 200: envelope('Webhooks', [webhook]) },
  },
  updateWebhook: {
    summary: 'Change a webhook',
    description: `Changes the fields given. ${WEBHOOK_FIELDS} Setting \`active\` again re-enables a webhook the service disabled.${BOTH}`,
    request: { all: { value: { events: 'all', active: true } } },
    responses: { 200: envelope('Webhooks', [{ ...webhook, events: ['all'] }]) },
  },
  deleteWebhook: { summary: 'Delete a webhook', description: `Deletes the webhook and answers \`{"success":true}\`.${BOTH}`, responses: deleted },
  rotateWebhookSecret: {
    summary: 'Rotate the secret of a webhook',
    description: `Issues a new secret, shown once in this answer; for 24 hours the old one signs too (two signatures in the header).${BOTH}`,
    responses: { 200: envelope('Webhooks', [{ ...webhook, secret: SECRET, previous_secret_expires_at: '2026-11-22 17:05:10' }]) },
  },
  listWebhookDeliveries: {
    summary: 'List the deliveries of a webhook',
    description:
      'Deliveries newest first, a page at a time (`limit` 1 to 1,000, `offset`), optionally of one `status` (`pending`, `delivered`, `failed`).' + BOTH,
    responses: { 200: envelope('Deliveries', [delivery]) },
  },
  retryWebhookDelivery: {
    summary: 'Send a delivery again',
    description:
      'Sends the delivery again now: it is `pending` again, with a new retry window (`WEBHOOK_RETRY_HOURS`). ' +
      'A delivery being sent right now is a 409.' +
      BOTH,
    responses: {
      200: envelope('Deliveries', [{ ...delivery, status: 'pending', next_attempt_at: '2026-11-22 18:00:00', finished_at: null }]),
      409: failed('Being sent', 'Delivery 7 is being sent right now; ask again once its attempt has ended'),
    },
  },
}
