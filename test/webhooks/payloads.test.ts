import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import type { ChannelExport, Run, Stream } from '../../src/db/schema.js'
import { deliveryMessage } from '../../src/webhooks/delivery-message.js'
import type { ClaimedDelivery } from '../../src/webhooks/delivery-store.js'
import { retryDelaySeconds } from '../../src/jobs/retry-backoff.js'
import { webhookBackoff } from '../../src/jobs/webhook-delivery-worker.js'
import { exportFinishedData, runFailedData, runStartedData, streamStatusChangedData } from '../../src/webhooks/payloads.js'
import { activeSecrets, newWebhookSecret } from '../../src/webhooks/signatures.js'

// What the event builders put in a payload, and how an attempt's request is made of it: no
// database here, the delivery tests send the real thing.

const run: Run = {
  pid: '5b1c7c1e-0f7e-4b59-9a57-5e1b4b0d7a10',
  account_id: '1',
  site_id: '12',
  action: 'import',
  target_id: null,
  trigger: 'api',
  status: 'failed',
  message: 'The import failed',
  admitted_at: null,
  claimed_at: null,
  attempt: 1,
  heartbeat_at: null,
  created_at: new Date('2025-03-01T10:00:00Z'),
  started_at: new Date('2025-03-01T10:00:01Z'),
  finished_at: new Date('2025-03-01T10:00:09Z'),
}

describe('event payloads', () => {
  it('of runs carry ids, states, times and links; a failed run its error codes, each once', () => {
    expect(runStartedData({ ...run, status: 'running', finished_at: null })).toEqual({
      pid: run.pid,
      site_id: '12',
      action: 'import',
      target_id: null,
      trigger: 'api',
      status: 'running',
      started_at: '2025-03-01T10:00:01.000Z',
      finished_at: null,
      links: { status: `/platform/v2/sites/12/status/${run.pid}`, site: '/platform/v2/sites/12', errors: `/platform/v2/sites/12/errors?pid=${run.pid}` },
    })
    expect(runFailedData(run, [1001, 1003, 1001])).toMatchObject({ status: 'failed', message: 'The import failed', error_codes: [1001, 1003] })
  })

  it('of exports carry the counts as numbers and the feed URLs', () => {
    const entry = {
      id: '44',
      account_id: '1',
      site_id: '12',
      channel_id: '3',
      pid: run.pid,
      export_start: new Date('2025-03-01T10:00:02Z'),
      export_time: new Date('2025-03-01T10:00:08Z'),
      process_status: 'success',
      product_count: '10',
      product_count_now: '10',
      product_count_previous: '8',
      product_count_new: '3',
      product_count_modified: '1',
      product_count_deleted: '1',
      product_count_unchanged: '6',
      product_count_skipped: '0',
      uploaded: 1,
    } satisfies ChannelExport
    const checks = {
      template: 'google_shopping',
      products_checked: 12,
      products_exported: 10,
      products_left_out: 2,
      products_exported_with_warnings: 4,
      products_with_errors: 2,
      products_with_warnings: 5,
      readiness_score: 10 / 12,
    }
    const message = 'Exported 10 of 12 products through Google; 2 left out by its template'
    const feedUrls = ['https://feeds.example.com/feeds/t/3.csv']
    expect(exportFinishedData({ ...entry, product_count_skipped: '2' }, checks, { message, feedUrls })).toMatchObject({
      export_id: '44',
      channel_id: '3',
      counts: { now: 10, previous: 8, new: 3, modified: 1, deleted: 1, unchanged: 6, skipped: 2 },
      checks,
      message,
      feed_urls: ['https://feeds.example.com/feeds/t/3.csv'],
      links: { channel: '/platform/v2/sites/12/channels/3', history: '/platform/v2/sites/12/channels/3/history' },
    })
  })

  it('become a signed request whose links are absolute under PUBLIC_URL, stream paths after STREAM_PREFIX', () => {
    const stream = { id: '9', status: 'disabled' } as Stream
    const secret = newWebhookSecret()
    const delivery = {
      event_id: 'b3f4a4a4-8f0e-4c1f-9d7e-2f0c6a1e5b77',
      event_type: 'stream.status_changed',
      event_created_at: new Date('2025-03-01T10:00:00Z'),
      payload: streamStatusChangedData(stream, 'active') as unknown as Record<string, unknown>,
      secret,
      previous_secret: null,
      previous_secret_expires_at: null,
    } as ClaimedDelivery
    const { headers, body } = deliveryMessage(delivery, new Date(), { publicUrl: 'https://catalog.example.com/', streamPrefix: '/api' })
    const verified = new Webhook(secret).verify(body, headers)
    expect(verified).toEqual({
      type: 'stream.status_changed',
      timestamp: '2025-03-01T10:00:00.000Z',
      data: { stream_id: '9', status: 'disabled', previous_status: 'active', links: { stream: 'https://catalog.example.com/api/streams/9' } },
    })
    expect(headers['webhook-id']).toBe(delivery.event_id)
  })

  it('become absolute feed URLs under PUBLIC_URL when given as paths', () => {
    const delivery = {
      event_id: 'e1',
      event_type: 'export.finished',
      event_created_at: new Date(),
      payload: { feed_urls: ['/feeds/tok/a.csv', 'https://cdn.example.com/b.csv'], links: { channel: '/platform/v2/sites/1/channels/2' } },
      secret: newWebhookSecret(),
      previous_secret: null,
      previous_secret_expires_at: null,
    } as unknown as ClaimedDelivery
    const withBase = JSON.parse(deliveryMessage(delivery, new Date(), { publicUrl: 'https://c.example.com', streamPrefix: '' }).body)
    expect(withBase.data).toEqual({
      feed_urls: ['https://c.example.com/feeds/tok/a.csv', 'https://cdn.example.com/b.csv'],
      links: { channel: 'https://c.example.com/platform/v2/sites/1/channels/2' },
    })
    const without = JSON.parse(deliveryMessage(delivery, new Date(), { streamPrefix: '' }).body)
    expect(without.data.feed_urls).toEqual(['/feeds/tok/a.csv', 'https://cdn.example.com/b.csv'])
  })

  it('are signed with the previous secret too until it expires', () => {
    const now = new Date('2025-03-01T10:00:00Z')
    const webhook = { secret: 'whsec_bmV3', previous_secret: 'whsec_b2xk', previous_secret_expires_at: new Date('2025-03-02T09:00:00Z') }
    expect(activeSecrets(webhook, now)).toEqual(['whsec_bmV3', 'whsec_b2xk'])
    expect(activeSecrets(webhook, new Date('2025-03-02T09:00:01Z'))).toEqual(['whsec_bmV3'])
  })

  it('are retried after 30 s × 2^n with ±20 % jitter, never more than 6 hours apart', () => {
    expect(retryDelaySeconds(1, webhookBackoff(30), () => 0.5)).toBe(30)
    expect(retryDelaySeconds(4, webhookBackoff(30), () => 0.5)).toBe(240)
    expect(retryDelaySeconds(4, webhookBackoff(30), () => 0)).toBeCloseTo(192)
    expect(retryDelaySeconds(4, webhookBackoff(30), () => 1)).toBeCloseTo(288)
    expect(retryDelaySeconds(40, webhookBackoff(30), () => 0.5)).toBe(6 * 3600)
  })
})
