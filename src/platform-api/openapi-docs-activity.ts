import type { OperationDocs } from '../http/openapi.js'

// The OpenAPI docs of the activity log's operations (by operationId).

const FILTERS =
  'Newest first. Filters: `action` (`site.updated`, or a prefix as `rule.*`), `actor` (a type: `platform_credential`, `token`, ' +
  '`console`, `operator`, `cli`, `system`; or `type:id`), `target_type`, `target_id`, `since` and `until` (ISO 8601; since ' +
  'inclusive, until exclusive). `limit` 1 to 100 (default 50); `cursor` takes `next_cursor` of the previous page. Pages are ' +
  'keyed on the entry id, so entries that arrive meanwhile never shift or repeat one. `changes` is `{field: [before, after]}`; ' +
  'a secret (a token, a webhook secret, a password in a URL) shows as `"changed"`, never with its value. Entries are kept ' +
  'ACTIVITY_RETENTION_DAYS (default 365). Product uploads are not in the log (their batches are the record); deletions are.'

const entry = {
  id: '1042',
  occurred_at: '2026-11-27T08:15:02.118Z',
  account_id: '7',
  actor: { type: 'platform_credential', id: 'acme-1f3c', label: 'acme-1f3c' },
  action: 'channel.updated',
  target: { type: 'channel', id: '12', site_id: '3' },
  changes: { filter: ['', 'price > 0'], destination_password: 'changed' },
  request: { id: '5a0c4f9e-3b1d-4d7e-9a51-0f1c2b3d4e5f', address: '203.0.113.9', user_agent: 'acme-sync/2.1', idempotency_key: null },
}
const page = { success: true, Activity: [entry], next_cursor: 'YTE6MTA0Mg', next: 'https://feeds.example.com/platform/v2/activity?cursor=YTE6MTA0Mg' }

export const activityDocs: Record<string, OperationDocs> = {
  listActivity: {
    summary: "List the account's activity",
    description: `Every change to the account: who made it (actor), what (action, target), what it replaced (changes) and the request. ${FILTERS}`,
    responses: { 200: { page: { summary: 'A page of entries', value: page } } },
  },
  listSiteActivity: {
    summary: "List a site's activity",
    description: `The changes to the site and what belongs to it (channels, rules, tags, data sources, runs). ${FILTERS}`,
    responses: { 200: { page: { summary: 'A page of entries', value: page } } },
  },
}
