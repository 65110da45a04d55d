import type { ErrorExamples, Example } from '../http/openapi.js'

// Example values of the platform interface for the OpenAPI document (/docs): ids as strings where
// docs/interface.md has them, timestamps `YYYY-MM-DD HH:MM:SS` (UTC), links as one-key objects with absolute
// URLs. One account's data throughout: project 1, site 1 (reference shop:de), stream 1.

const BASE = 'http://127.0.0.1:8080/platform/v2'
export const PID = '7d0c5a4e-2f1b-4c8e-9a3d-5b6f7e8a9c01'

/** The answer `{success:true, <name>: [...items]}`, as an example. */
export function envelope(name: string, items: unknown[], summary?: string): Record<string, Example> {
  return { [summary ? summary.replace(/\W+/g, '-').toLowerCase() : 'ok']: { ...(summary && { summary }), value: { success: true, [name]: items } } }
}

export const project = {
  id: '1',
  name: 'Webshop',
  created_at: '2026-11-21 16:35:38',
  links: [{ self: `${BASE}/projects/1` }, { sites: `${BASE}/projects/1/sites` }],
}

export const site = {
  id: '1',
  title: 'Shop DE',
  project_id: '1',
  status: 'active',
  import_schedule: 'TZ=Europe/Berlin\nH 3 * * *',
  id_column: 'id',
  processing_status: 'Done',
  created_at: '2026-11-21 16:36:02',
  links: [{ self: `${BASE}/sites/1` }, { tags: `${BASE}/sites/1/tags` }, { project: `${BASE}/projects/1` }],
  availableProjectIds: ['1'],
}

export const siteAt = {
  ...site,
  id: '2',
  title: 'Shop AT',
  import_schedule: '',
  created_at: '2026-11-21 16:41:17',
  links: [{ self: `${BASE}/sites/2` }, { tags: `${BASE}/sites/2/tags` }, { project: `${BASE}/projects/1` }],
}

export const tag = { id: '2', key: 'country', value: 'de', readonly: '0' }

export const dataSource = {
  id: 1,
  site_id: 1,
  description: 'main catalog',
  source: 'stream',
  import_type: 1,
  import_id: 1,
  status: 'active',
  settings: ['stream : 1'],
  stream_id: 1,
  import_empty: false,
}

/** A data-source answer: `{success, Sources, meta}`. */
export function sources(items: unknown[], cursor = { current: 0, prev: 0, next: 0, count: items.length }): Record<string, Example> {
  return { ok: { value: { success: true, Sources: items, meta: { cursor } } } }
}

export const channel = {
  id: '1',
  site_id: '1',
  channel_id: '1',
  name: 'Google DE',
  export_name: 'google-shopping',
  active: true,
  format: 'csv',
  mapping: [
    { column: 'id', source: 'id' },
    { column: 'title', source: 'title' },
    { column: 'price', source: 'price' },
    { column: 'condition', value: 'new' },
  ],
  filter: 'price > 0',
  filename: 'google-{site_id}.csv',
  filenames: [
    { type: null, filename: 'google-{site_id}.csv' },
    { type: 'new', filename: 'new-{date}.csv' },
  ],
  feed_destinations: {
    '1': {
      destination_id: 1,
      name: 'Feed URL',
      destination_name: 'Feed URL',
      active: true,
      urls: ['http://127.0.0.1:8080/feeds/3kq9Zt1mVb8xYw2cR5nP7a/google-1.csv', 'http://127.0.0.1:8080/feeds/3kq9Zt1mVb8xYw2cR5nP7a/new-2026-11-21.csv'],
    },
  },
  template: 'generic',
  validation_mode: 'exclude',
  currency: null,
  readiness_threshold: null,
  safety_max_drop: 0.5,
  safety_max_left_out: 0.5,
  safety_min_products: 100,
  export_status: 'published',
  hold: null,
  links: [
    { self: `${BASE}/sites/1/channels/1` },
    { history: `${BASE}/sites/1/channels/1/history` },
    { diagnostics: `${BASE}/sites/1/channels/1/diagnostics` },
    { template: `${BASE}/export_templates/generic` },
    { site: `${BASE}/sites/1` },
    { products: 'http://127.0.0.1:8080/product/v2/site/1/stage/channel/1' },
  ],
}

export const channelHistoryEntry = {
  id: '4',
  site_id: '1',
  site_channel_id: '1',
  export_start: '2026-11-21 19:41:10',
  export_time: '2026-11-21 19:41:12',
  product_count: '18370',
  product_count_now: '18370',
  product_count_previous: '18342',
  product_count_new: '31',
  product_count_modified: '205',
  product_count_deleted: '3',
  product_count_unchanged: '18134',
  product_count_skipped: '0',
  process_status: 'success',
  pid: PID,
  uploaded: '1',
}

export const siteError = {
  id: '12',
  pid: PID,
  error: '1001',
  data: '{"data_source_id":"1","stream_id":"1"}',
  site_id: '1',
  message:
    'The main data source 1 (stream 1 "main catalog") has no products; the import was stopped and the previous data kept. ' +
    'Allow empty imports on the data source to import it empty.',
  datetime: '2026-11-21 19:40:02',
  type: 'Error',
  classification: 'high',
  links: [{ site: `${BASE}/sites/1` }, { status: `${BASE}/sites/1/status/${PID}` }],
}

export const importHistoryEntry = {
  id: '1',
  site_id: 1,
  import_time: '2026-11-21 19:40:02',
  import_time_utc: '2026-11-21 19:40:02',
  product_count: '18370',
  pid: PID,
  links: [{ site: `${BASE}/sites/1` }, { status: `${BASE}/sites/1/status/${PID}` }],
}

export const webhook = {
  id: '1',
  url: 'https://erp.example.com/catalog-events',
  events: ['batch.processed', 'run.failed', 'run.succeeded'],
  active: true,
  description: 'ERP',
  previous_secret_expires_at: null,
  consecutive_failures: 0,
  disabled_reason: null,
  disabled_at: null,
  created_at: '2026-11-21 17:02:44',
  updated_at: '2026-11-21 17:02:44',
  links: [{ self: `${BASE}/webhooks/1` }, { deliveries: `${BASE}/webhooks/1/deliveries` }, { 'rotate-secret': `${BASE}/webhooks/1/rotate-secret` }],
}

export const SECRET = 'whsec_kH3vQm9Zr2Lx7Tn4Bw8Yp1Cs6Df0Gj5Ha3Ke2Nu9Ro='

export const delivery = {
  id: '7',
  webhook_id: '1',
  event_id: '0b9e6f6c-3f4a-4f0e-8d55-2c1a7b9e4d21',
  event_type: 'run.failed',
  status: 'failed',
  attempts: 12,
  last_response_code: 500,
  last_error: 'HTTP 500 Internal Server Error',
  response_body: '{"error":"database unavailable"}',
  next_attempt_at: null,
  last_attempt_at: '2026-11-22 17:40:05',
  created_at: '2026-11-21 17:40:02',
  finished_at: '2026-11-22 17:40:05',
  links: [{ webhook: `${BASE}/webhooks/1` }, { retry: `${BASE}/webhooks/1/deliveries/7/retry` }],
}

const failure = (summary: string, message: string): Example => ({ summary, value: { success: false, message } })

/** The platform's error body for each status, unless an operation gives its own. */
export const platformErrorExamples: ErrorExamples = {
  400: failure('Bad request', 'limit: must be <= 1000'),
  401: failure('Missing or invalid credential', 'Unauthorized'),
  404: failure('Not found', 'The requested resource could not be found'),
  409: failure('Conflict', 'reference: shop:de is already used by site 1'),
  413: failure('Body too large', 'The body is larger than 1048576 bytes (after decompression)'),
  415: failure('Unsupported encoding', 'Content-Encoding br is not supported; send gzip, deflate or an uncompressed body'),
  429: failure('Rate limit', 'Too many attempts.'),
  500: failure('Internal failure', 'Internal Server Error'),
  503: failure(
    'Read timeout',
    'The read took longer than 30000 ms (PRODUCT_READ_TIMEOUT_MS) and was cancelled; ask for fewer rows, fewer fields or a narrower filter',
  ),
}

/** Descriptions of the platform interface's tags, in the order /docs shows them. */
export const platformTags = [
  { name: 'projects', description: 'Projects group sites. Platform interface: `X-Auth-Token`, JSON bodies, `{success:false,message}` errors.' },
  {
    name: 'sites',
    description:
      'A site imports product data from its data sources and exports it through its channels. ' +
      'In every path a site is its id or a `<tagName>:<tagValue>` reference.',
  },
  { name: 'tags', description: 'Site tags: key/value pairs; a tag (or the site reference) addresses a site in place of its id.' },
  { name: 'data sources', description: 'Stream data sources connect streams to a site. These endpoints take the X-Auth-Token or the bearer token.' },
  { name: 'processing', description: 'Runs (import, export, channel, export-all, all) and their status, polled by process id.' },
  { name: 'errors', description: 'Site errors that runs left behind, with numeric codes (listed in the README).' },
  { name: 'import history', description: 'One entry per successful import of a site.' },
  {
    name: 'channels',
    description: 'Channels export the import stage as feed files (csv, tsv, ndjson, xml), served by the platform or posted to an http destination.',
  },
  {
    name: 'activity',
    description:
      'The activity log: every change to the account, with the credential and request that made it and what it replaced. ' +
      'Any creating POST, an upload, a delete of products and POST /process take an `Idempotency-Key`.',
  },
  {
    name: 'rules',
    description:
      "Transformation rules: a site's turn its import stage into the intermediate stage every channel reads, a channel's its mapped " +
      'rows into what its template checks and its file carries. Ordered, each an if/then/else over one attribute, with a preview.',
  },
  {
    name: 'product data',
    description: "Reads of a site's import or intermediate stage or of a channel's stage, with paging, field selection and an SQL-like filter.",
  },
  { name: 'webhooks', description: 'Subscriptions to events, delivered signed as Standard Webhooks has it. X-Auth-Token or bearer token.' },
]

/** A channel a safety stop holds: its last published files keep serving. */
export const heldChannel = {
  ...channel,
  export_status: 'held',
  hold: {
    pid: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
    reason: 'drop',
    message:
      'Channel 1 (Google DE) held: its file would hold 13 products instead of the 1840 delivered, a drop of 99.3% (safety_max_drop 50%); ' +
      'the last delivered file keeps serving',
    held_at: '2026-11-27T09:14:03.000Z',
    products: 13,
    products_previous: 1840,
    products_checked: 1840,
    products_left_out: 1827,
    threshold: 0.5,
    min_products: 100,
    links: [
      { release: `${BASE}/sites/1/channels/1/release` },
      { history: `${BASE}/sites/1/channels/1/history` },
      { diagnostics: `${BASE}/sites/1/channels/1/diagnostics` },
    ],
  },
}

/** A channel rule: availability written the ways shops write it, in Google's spelling. */
export const rule = {
  id: '12',
  site_id: '1',
  channel_id: '1',
  position: 1,
  enabled: true,
  description: 'Availability as Google spells it',
  attribute: 'availability',
  if: { all: [{ attribute: 'availability', operator: 'is_not_empty' }] },
  then: [{ action: 'map', entries: { 'in stock': 'in_stock', 'out of stock': 'out_of_stock', 'on order': 'backorder' }, case_sensitive: false }],
  else: [{ action: 'set', value: 'out_of_stock' }],
  summary: 'If availability is not empty: map availability through 3 values; otherwise set availability to "out_of_stock"',
  created_at: '2026-11-27 09:10:00',
  updated_at: '2026-11-27 09:10:00',
  links: [
    { self: `${BASE}/sites/1/channels/1/rules/12` },
    { rules: `${BASE}/sites/1/channels/1/rules` },
    { preview: `${BASE}/sites/1/channels/1/rules/preview` },
  ],
}
