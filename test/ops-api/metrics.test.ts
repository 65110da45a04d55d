import { randomUUID } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import { NDJSON, ndjson, streamClient } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'
import { factories, importFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { readExposition, type Scrape } from './exposition.js'

// GET /metrics (issue 14): the Prometheus text of what the app did, read through the real HTTP
// interface after uploads, runs and requests. Counters are read before and after, and their
// difference is checked: other tests of the file move them too.

const t = useTestApp({
  ...HIGH_LIMITS,
  DB_POOL_SIZE: '7',
  UPLOAD_CONCURRENCY: '3',
  READ_CONCURRENCY: '2',
  RUN_POLL_SECONDS: '0.5',
  SCHEDULER_INTERVAL_SECONDS: '0',
  MAX_UPLOAD_BYTES: '100000',
})
const TOKEN = `metrics-${randomUUID()}`
// A second app whose metrics need the token. It executes no runs, so a run queued on it stays queued,
// and it limits platform requests to one a second, which a scrape must not meet.
const guarded = useTestApp({
  DB_POOL_SIZE: '6',
  UPLOAD_CONCURRENCY: '2',
  READ_CONCURRENCY: '2',
  METRICS_TOKEN: TOKEN,
  RUN_CONCURRENCY: '0',
  SCHEDULER_INTERVAL_SECONDS: '0',
  PLATFORM_RATE_LIMIT: '1',
})
const given = factories(t)
const givenGuarded = factories(guarded)

async function scrape(app: FastifyInstance = t.app, headers: Record<string, string> = {}): Promise<Scrape> {
  const response = await app.inject({ method: 'GET', url: '/metrics', headers })
  expect(response.statusCode, response.body).toBe(200)
  return readExposition(response.body)
}

const REQUESTS = 'catalog_http_request_duration_seconds_count'

describe('GET /metrics', () => {
  it('answers the Prometheus text format with every metric of issue 14 and the process defaults', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/metrics' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
    const { text, samples, value } = await scrape()
    expect(samples.length).toBeGreaterThan(0)
    const types: Record<string, string> = {
      catalog_http_request_duration_seconds: 'histogram',
      catalog_upload_rows_total: 'counter',
      catalog_upload_bytes_total: 'counter',
      catalog_batches_total: 'counter',
      catalog_runs_total: 'counter',
      catalog_run_duration_seconds: 'histogram',
      catalog_active_runs: 'gauge',
      catalog_db_pool_connections: 'gauge',
      catalog_db_pool_waiting: 'gauge',
      catalog_db_pool_max_connections: 'gauge',
      process_cpu_user_seconds_total: 'counter',
    }
    for (const [name, type] of Object.entries(types)) expect(text).toContain(`# TYPE ${name} ${type}\n`)
    // The app's pool has DB_POOL_SIZE connections (test-app.ts sizes it so); 7 here.
    expect(value('catalog_db_pool_max_connections')).toBe(7)
    const states = samples.filter((s) => s.name === 'catalog_db_pool_connections').map((s) => s.labels.state)
    expect(states.sort()).toEqual(['idle', 'in_use'])
    expect(samples.filter((s) => s.name === 'catalog_db_pool_waiting')).toHaveLength(1)
    expect(samples.find((s) => s.name === 'catalog_batches_total' && s.labels.stage === 'import' && s.labels.outcome === 'failed')).toBeDefined()
  })

  it('counts requests by method, route pattern and status, with unmatched paths under one label and the scrapes left out', async () => {
    const c = await streamClient(t)
    const before = await scrape()
    const missing = `no-such-site-${randomUUID()}`
    const notFound = await t.request({ method: 'GET', url: `/platform/v2/sites/${missing}`, headers: c.account.platform })
    expect(notFound.statusCode).toBe(404)
    const noCredential = await t.request({ method: 'GET', url: `/platform/v2/sites/${missing}` })
    expect(noCredential.statusCode).toBe(401)
    const unknownPath = `/nowhere/${randomUUID()}`
    expect((await t.request({ method: 'GET', url: unknownPath })).statusCode).toBe(404)
    expect((await t.request({ method: 'DELETE', url: `/streams/${randomUUID()}/nothing` })).statusCode).toBe(404)
    const after = await scrape()

    const site = { method: 'GET', route: '/platform/v2/sites/:siteId' }
    expect(after.value(REQUESTS, { ...site, status_code: '404' }) - before.value(REQUESTS, { ...site, status_code: '404' })).toBe(1)
    expect(after.value(REQUESTS, { ...site, status_code: '401' }) - before.value(REQUESTS, { ...site, status_code: '401' })).toBe(1)
    const unmatched = { route: 'unmatched', status_code: '404' }
    expect(after.value(REQUESTS, { ...unmatched, method: 'GET' }) - before.value(REQUESTS, { ...unmatched, method: 'GET' })).toBe(1)
    expect(after.value(REQUESTS, { ...unmatched, method: 'DELETE' }) - before.value(REQUESTS, { ...unmatched, method: 'DELETE' })).toBe(1)
    // The histogram's buckets and sum follow its count: the 404 took some time, below +Inf.
    const inf = { ...site, status_code: '404', le: '+Inf' }
    expect(after.value('catalog_http_request_duration_seconds_bucket', inf) - before.value('catalog_http_request_duration_seconds_bucket', inf)).toBe(1)
    // Paths are never labels: neither the id nor the unknown path appears.
    expect(after.text).not.toContain(missing)
    expect(after.text).not.toContain(unknownPath)
    expect(after.samples.filter((s) => s.labels.route === '/metrics')).toEqual([])
    const routes = new Set(after.samples.filter((s) => s.name === REQUESTS).map((s) => s.labels.route))
    for (const route of routes) expect(route === 'unmatched' || route?.startsWith('/'), route).toBe(true)
  })

  it('counts an upload once it committed: its rows, its decoded bytes and its batch; a refused or rolled back upload counts no rows', async () => {
    const c = await streamClient(t)
    const stream = (await given.stream({ account: c.account })).id
    const rows = { accepted: { outcome: 'accepted' }, rejected: { outcome: 'rejected' } }
    const batches = (outcome: string) => ({ stage: 'upload', outcome })
    const before = await scrape()

    const payload =
      ndjson([
        { id: 'A', title: 'Shirt' },
        { id: 'B', title: 'Shoe' },
      ]) + '{"title":"no id"}\n'
    expect((await c.upload(stream, payload)).statusCode).toBe(202)
    const gzipped = ndjson([{ id: 'C', title: 'Hat' }])
    expect((await c.upload(stream, gzipSync(gzipped), { ...NDJSON, 'content-encoding': 'gzip' })).statusCode).toBe(202)
    const afterAccepted = await scrape()
    expect(afterAccepted.value('catalog_upload_rows_total', rows.accepted) - before.value('catalog_upload_rows_total', rows.accepted)).toBe(3)
    expect(afterAccepted.value('catalog_upload_rows_total', rows.rejected) - before.value('catalog_upload_rows_total', rows.rejected)).toBe(1)
    // Bytes as decoded: the gzipped upload counts its NDJSON, not its smaller gzip.
    const bytes = Buffer.byteLength(payload) + Buffer.byteLength(gzipped)
    expect(afterAccepted.value('catalog_upload_bytes_total') - before.value('catalog_upload_bytes_total')).toBe(bytes)
    expect(afterAccepted.value('catalog_batches_total', batches('accepted')) - before.value('catalog_batches_total', batches('accepted'))).toBe(2)

    // Every line refused: the batch is stored as failed; an empty payload stores nothing (422).
    expect((await c.upload(stream, '{"title":"no id"}\n')).statusCode).toBe(202)
    expect((await c.upload(stream, '\n\n')).statusCode).toBe(422)
    // Rolled back after some rows went to the database: the body passes MAX_UPLOAD_BYTES (413).
    const tooLarge = ndjson(Array.from({ length: 2000 }, (_, i) => ({ id: `big-${i}`, title: 'x'.repeat(40) })))
    expect((await c.upload(stream, tooLarge)).statusCode).toBe(413)
    // Refused before any batch: a content type the stream does not take.
    expect((await c.upload(stream, payload, { 'content-type': 'text/csv' })).statusCode).toBe(415)
    const after = await scrape()
    expect(after.value('catalog_batches_total', batches('refused')) - afterAccepted.value('catalog_batches_total', batches('refused'))).toBe(2)
    expect(after.value('catalog_batches_total', batches('accepted')) - afterAccepted.value('catalog_batches_total', batches('accepted'))).toBe(0)
    expect(after.value('catalog_upload_rows_total', rows.accepted) - afterAccepted.value('catalog_upload_rows_total', rows.accepted)).toBe(0)
    expect(after.value('catalog_upload_rows_total', rows.rejected) - afterAccepted.value('catalog_upload_rows_total', rows.rejected)).toBe(1)
    expect(after.value('catalog_upload_bytes_total') - afterAccepted.value('catalog_upload_bytes_total')).toBe(Buffer.byteLength('{"title":"no id"}\n'))
  })

  it('counts deletes as batches of their rows', async () => {
    const c = await streamClient(t)
    const stream = (await given.stream({ account: c.account })).id
    const before = await scrape()
    expect((await c.send('DELETE', `/streams/${stream}/products/SKU1`)).statusCode).toBe(202)
    expect((await c.send('DELETE', `/streams/${stream}/products?all=true`)).statusCode).toBe(202)
    const after = await scrape()
    const accepted = { stage: 'upload', outcome: 'accepted' }
    expect(after.value('catalog_batches_total', accepted) - before.value('catalog_batches_total', accepted)).toBe(2)
    // A delete of one product is one row; a delete of every product has none of its own.
    const rows = { outcome: 'accepted' }
    expect(after.value('catalog_upload_rows_total', rows) - before.value('catalog_upload_rows_total', rows)).toBe(2)
    expect(after.value('catalog_upload_bytes_total') - before.value('catalog_upload_bytes_total')).toBe(0)
  })

  it('counts runs by action and outcome with their durations, and the batches an import processed', async () => {
    const success = { action: 'import', outcome: 'success' }
    const failed = { action: 'import', outcome: 'failed' }
    const processed = { stage: 'import', outcome: 'processed' }
    const before = await scrape()

    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    expect((await f.upload(stream, [{ id: 'A' }])).statusCode).toBe(202)
    expect((await f.upload(stream, [{ id: 'B' }])).statusCode).toBe(202)
    const run = await f.run('import')
    expect(run.status, run.message).toBe('success')
    // A main source without products: the import fails (1001), a failure the site's owner acts on.
    const empty = await importFixture(t)
    await empty.attach(await empty.createStream())
    const refused = await empty.run('import')
    expect(refused.status, refused.message).toBe('failed')

    // The worker reports an attempt as it lets go of it, just after the status changed.
    const after = await eventually(async () => {
      const now = await scrape()
      return now.value('catalog_runs_total', failed) > before.value('catalog_runs_total', failed) ? now : undefined
    }, 'the failed run in the metrics')
    expect(after.value('catalog_runs_total', success) - before.value('catalog_runs_total', success)).toBe(1)
    expect(after.value('catalog_runs_total', failed) - before.value('catalog_runs_total', failed)).toBe(1)
    const durations = 'catalog_run_duration_seconds_count'
    expect(after.value(durations, success) - before.value(durations, success)).toBe(1)
    expect(after.value(durations, failed) - before.value(durations, failed)).toBe(1)
    expect(after.value('catalog_run_duration_seconds_sum', success)).toBeGreaterThan(before.value('catalog_run_duration_seconds_sum', success))
    expect(after.value('catalog_batches_total', processed) - before.value('catalog_batches_total', processed)).toBe(2)
    // The run request itself, by its route's pattern.
    const request = { method: 'POST', route: '/platform/v2/process/:siteId', status_code: '200' }
    expect(after.value(REQUESTS, request) - before.value(REQUESTS, request)).toBe(2)
  })

  it('shows the queued and running runs of the database, by status and action', async () => {
    const bearer = { authorization: `Bearer ${TOKEN}` }
    const f = await importFixture(guarded)
    expect((await f.process({ action: 'import' })).statusCode).toBe(200)
    // A running run of another site, as a process that works on it would have left it.
    const account = await givenGuarded.account()
    const site = await givenGuarded.site({ account })
    await guarded.db
      .insertInto('run')
      .values({
        pid: randomUUID(),
        account_id: account.accountId,
        site_id: site.id,
        action: 'export-all',
        target_id: null,
        trigger: 'api',
        status: 'running',
        admitted_at: null,
        claimed_at: null,
        heartbeat_at: new Date(),
        started_at: new Date(),
        finished_at: null,
      })
      .execute()
    const { samples, value } = await scrape(guarded.app, bearer)
    expect(value('catalog_active_runs', { status: 'queued', action: 'import' })).toBe(1)
    expect(value('catalog_active_runs', { status: 'running', action: 'export-all' })).toBe(1)
    expect(value('catalog_active_runs')).toBe(2)
    // Every status and action is there, at 0 when none: a graph shows 0, not a gap.
    expect(samples.filter((s) => s.name === 'catalog_active_runs')).toHaveLength(10)
  })
})

describe('GET /metrics with METRICS_TOKEN', () => {
  it('refuses a scrape without the token, or with another, in the platform error body', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${TOKEN}x`, TOKEN, `Basic ${TOKEN}`]) {
      const response = await guarded.request({ method: 'GET', url: '/metrics', headers: authorization === undefined ? {} : { authorization } })
      expect(response.statusCode, authorization).toBe(401)
      expect(response.json()).toEqual({ success: false, message: expect.stringMatching(/Authorization: Bearer/) })
      expect(response.headers['www-authenticate']).toMatch(/^Bearer/)
      expect(response.body).not.toContain('catalog_')
    }
  })

  it('answers a scrape with the token, whatever the case of the scheme, and never rate-limits it', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const { value } = await scrape(guarded.app, { authorization: `${scheme} ${TOKEN}` })
      expect(value('catalog_db_pool_max_connections')).toBe(6)
    }
    // Far more than PLATFORM_RATE_LIMIT (1 a second) within one second of the test clock.
    for (let i = 0; i < 5; i++) {
      const response = await guarded.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })
      expect(response.statusCode).toBe(200)
      expect(response.headers['x-ratelimit-limit']).toBeUndefined()
    }
  })

  it('is open without METRICS_TOKEN, and is no operation of the OpenAPI document', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200)
    const document = t.app.swagger() as unknown as { paths: Record<string, unknown> }
    expect(Object.keys(document.paths)).not.toContain('/metrics')
    expect(Object.keys(document.paths).length).toBeGreaterThan(10)
  })
})
