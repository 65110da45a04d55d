import { describe, expect, it } from 'vitest'
import { DESTINATION_KINDS, FORMATS, VALIDATION_MODES } from '../../src/channels/channel-input.js'
import { SEVERITIES } from '../../src/channels/channel-diagnostics.js'
import { SITE_STATUSES } from '../../src/sites/site-input.js'
import { DELIVERY_STATUSES } from '../../src/webhooks/webhook-overview.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import type { Response } from '../helpers/inject.js'
import { recordUpload } from '../webhooks/receiver.js'
import { goodProduct, googleChannel } from '../templates/template-fixture.js'

// Request fields whose values are one of a closed set the domain keeps (a channel's format, validation
// mode and destination types, a diagnostics filter's severity, a delivery filter's status): the route
// schema says the domain's own list, so the API reference shows it and a value outside it is a 400
// naming the field before any work; every spelling clients send (each value, null, the field left out)
// still does what it did.

const t = useTestApp({
  ...HIGH_LIMITS,
  RUN_POLL_SECONDS: '0.5',
  SCHEDULER_INTERVAL_SECONDS: '0',
  ALLOW_PRIVATE_DESTINATIONS: 'true',
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_CONCURRENCY: '0',
})

/** A 400 in the platform's body whose message names `field` and says what it must be. */
function expectRefused(response: Response, field: string, rule: RegExp): void {
  expect(response.statusCode, response.body).toBe(400)
  const body = response.json<{ success: boolean; message: string }>()
  expect(body.success).toBe(false)
  expect(body.message.startsWith(`${field}: `), `"${body.message}" names ${field}`).toBe(true)
  expect(body.message).toMatch(rule)
}

interface OpenApi {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { name: string; in: string; schema?: { enum?: unknown[] } }[]
        requestBody?: { content: Record<string, { schema: { properties: Record<string, { enum?: unknown[]; items?: unknown }> } }> }
      }
    >
  >
}

describe('the API reference shows the domain lists', () => {
  it('as the enums of the query parameters and body fields', () => {
    const document = t.app.swagger() as unknown as OpenApi
    const query = (path: string, name: string) => document.paths[path]?.get?.parameters?.find((p) => p.in === 'query' && p.name === name)?.schema?.enum
    const body = (path: string, method: string) => document.paths[path]?.[method]?.requestBody?.content['application/json']?.schema.properties ?? {}
    expect(query('/platform/v2/sites/{siteId}/channels/{channelId}/diagnostics', 'severity')).toEqual([...SEVERITIES])
    expect(query('/platform/v2/webhooks/{webhookId}/deliveries', 'status')).toEqual([...DELIVERY_STATUSES])
    for (const method of ['post', 'put']) {
      const path = method === 'post' ? '/platform/v2/sites/{siteId}/channels' : '/platform/v2/sites/{siteId}/channels/{channelId}'
      const channel = body(path, method)
      expect(channel.format?.enum, path).toEqual([...FORMATS, null])
      expect(channel.validation_mode?.enum, path).toEqual([...VALIDATION_MODES, null])
      const destination = (channel.destinations as { anyOf?: { items?: { properties: Record<string, { enum?: unknown[] }> } }[] }).anyOf?.[0]?.items
      expect(destination?.properties.type?.enum, path).toEqual([...DESTINATION_KINDS, null])
    }
    expect(body('/platform/v2/sites', 'post').status?.enum).toEqual([...SITE_STATUSES, null])
    expect(body('/platform/v2/sites/{siteId}', 'put').status?.enum).toEqual([...SITE_STATUSES, null])
  })
})

describe('GET …/channels/{id}/diagnostics?severity=', () => {
  async function exportedChannel(f: ImportFixture): Promise<string> {
    const stream = await f.createStream()
    await f.attach(stream)
    // An error (a price that is no price), a warning (no category) and infos (bare prices get the currency).
    const rows = [goodProduct('a'), goodProduct('b', { price: 'ten' }), goodProduct('c', { google_product_category: '' })]
    expect((await f.upload(stream, rows)).statusCode).toBe(202)
    const channel = await googleChannel(f)
    expect((await f.run('all')).status).toBe('success')
    return channel.id
  }

  it('takes each severity and lists only the checks of that severity', async () => {
    const f = await importFixture(t)
    const path = `/sites/${f.site.id}/channels/${await exportedChannel(f)}/diagnostics`
    for (const severity of SEVERITIES) {
      const response = await f.c.get(`${path}?severity=${severity}`)
      expect(response.statusCode, response.body).toBe(200)
      const entries = response.json<{ Diagnostics: { severity: string }[] }>().Diagnostics
      expect(entries.length, severity).toBeGreaterThan(0)
      expect(new Set(entries.map((entry) => entry.severity))).toEqual(new Set([severity]))
    }
    // Left out: every severity.
    const all = await f.c.get(path)
    expect(all.statusCode, all.body).toBe(200)
    expect(new Set(all.json<{ Diagnostics: { severity: string }[] }>().Diagnostics.map((entry) => entry.severity))).toEqual(new Set(SEVERITIES))
  })

  it('refuses a severity outside the list with a 400 naming the field', async () => {
    const f = await importFixture(t)
    const channel = await f.platform('POST', `/sites/${f.site.id}/channels`, { name: 'Any', export_name: 'any' })
    const path = `/sites/${f.site.id}/channels/${channel.json<{ Channels: { id: string }[] }>().Channels[0]?.id}/diagnostics`
    for (const value of ['fatal', 'ERROR', 'Error', '', 'error,warning']) {
      expectRefused(await f.c.get(`${path}?severity=${encodeURIComponent(value)}`), 'severity', /^severity: must be one of error, warning, info$/)
    }
    expectRefused(await f.c.get(`${path}?severity=error&severity=info`), 'severity', /string/)
  })
})

describe('GET /webhooks/{id}/deliveries?status=', () => {
  it('takes each status and filters by it; another is a 400 naming the field', async () => {
    const f = await importFixture(t)
    const created = await f.platform('POST', '/webhooks', { url: 'http://127.0.0.1:9/hooks' })
    expect(created.statusCode, created.body).toBe(201)
    const webhookId = created.json<{ Webhooks: { id: string }[] }>().Webhooks[0]?.id ?? ''
    // One delivery, pending: no delivery worker runs.
    await recordUpload(t.db, f.account.accountId)
    const path = `/webhooks/${webhookId}/deliveries`
    for (const status of DELIVERY_STATUSES) {
      const response = await f.c.get(`${path}?status=${status}`)
      expect(response.statusCode, response.body).toBe(200)
      const deliveries = response.json<{ Deliveries: { status: string }[] }>().Deliveries
      expect(deliveries.map((delivery) => delivery.status)).toEqual(status === 'pending' ? ['pending'] : [])
    }
    expect((await f.c.get(path)).json<{ Deliveries: unknown[] }>().Deliveries).toHaveLength(1)
    for (const value of ['lost', 'Pending', '']) {
      expectRefused(await f.c.get(`${path}?status=${value}`), 'status', /^status: must be one of pending, delivered, failed$/)
    }
  })
})

describe('a channel body: format, validation_mode and destinations[].type', () => {
  interface ChannelJson {
    id: string
    format: string
    validation_mode: string
    feed_destinations: Record<string, { destination_id: number }>
  }
  const channelOf = (response: Response): ChannelJson => {
    expect([200, 201], response.body).toContain(response.statusCode)
    return response.json<{ Channels: ChannelJson[] }>().Channels[0] as ChannelJson
  }
  const fileServer = { host: '127.0.0.1', user: 'feeds', password: 'secret' }
  // Each destination type the domain takes, as a client writes it (file servers are not reached on save).
  const destinations: Record<(typeof DESTINATION_KINDS)[number], Record<string, unknown>> = {
    feed: { type: 'feed' },
    http: { type: 'http', url: 'http://127.0.0.1:9/receive' },
    sftp: { type: 'sftp', ...fileServer, host_key_sha256: `SHA256:${'A'.repeat(43)}` },
    ftps: { type: 'ftps', ...fileServer },
  }
  const DESTINATION_IDS = { feed: 1, http: 2, sftp: 3, ftps: 4 }

  it('takes each value of the lists, and null or nothing as not given', async () => {
    const f = await importFixture(t)
    const channels = `/sites/${f.site.id}/channels`
    for (const format of FORMATS) {
      const created = channelOf(await f.platform('POST', channels, { name: `F ${format}`, export_name: 'any', format }))
      expect(created.format).toBe(format)
    }
    for (const validation_mode of VALIDATION_MODES) {
      const created = channelOf(await f.platform('POST', channels, { name: `V ${validation_mode}`, export_name: 'any', validation_mode }))
      expect(created.validation_mode).toBe(validation_mode)
    }
    for (const kind of DESTINATION_KINDS) {
      const created = channelOf(await f.platform('POST', channels, { name: `D ${kind}`, export_name: 'any', destinations: [destinations[kind]] }))
      expect(Object.values(created.feed_destinations).map((d) => d.destination_id)).toEqual([DESTINATION_IDS[kind]])
    }
    // Every field of the model, null for unset ones (docs/compatibility.md): the defaults.
    const nulls = channelOf(
      await f.platform('POST', channels, {
        name: 'Nulls',
        export_name: 'any',
        format: null,
        validation_mode: null,
        destinations: [{ type: null, name: null }],
      }),
    )
    expect(nulls).toMatchObject({ format: 'csv', validation_mode: 'exclude' })
    expect(Object.values(nulls.feed_destinations).map((d) => d.destination_id)).toEqual([1])
    // An update: a value changes it, null keeps it.
    const path = `${channels}/${nulls.id}`
    expect(channelOf(await f.platform('PUT', path, { format: 'xml', validation_mode: 'warn_only' }))).toMatchObject({
      format: 'xml',
      validation_mode: 'warn_only',
    })
    expect(channelOf(await f.platform('PUT', path, { format: null, validation_mode: null }))).toMatchObject({ format: 'xml', validation_mode: 'warn_only' })
  })

  it('refuses a value outside each list with a 400 naming the field, and saves nothing', async () => {
    const f = await importFixture(t)
    const channels = `/sites/${f.site.id}/channels`
    const body = (more: Record<string, unknown>) => ({ name: 'Refused', export_name: 'any', ...more })
    for (const format of ['json', 'CSV', '', 'csv ']) {
      expectRefused(await f.platform('POST', channels, body({ format })), 'format', /^format: must be one of csv, tsv, ndjson, xml$/)
    }
    for (const validation_mode of ['strict', 'Exclude', '']) {
      expectRefused(await f.platform('POST', channels, body({ validation_mode })), 'validation_mode', /^validation_mode: must be one of exclude, warn_only$/)
    }
    for (const type of ['ftp', 'FEED', '', 's3']) {
      expectRefused(
        await f.platform('POST', channels, body({ destinations: [{ type }] })),
        'destinations.0.type',
        /^destinations\.0\.type: must be one of feed, http, sftp, ftps(;|$)/,
      )
    }
    const saved = channelOf(await f.platform('POST', channels, body({ name: 'Kept', format: 'tsv' })))
    expectRefused(await f.platform('PUT', `${channels}/${saved.id}`, { format: 'yaml' }), 'format', /must be one of/)
    expect(channelOf(await f.platform('GET', `${channels}/${saved.id}`)).format).toBe('tsv')
    const listed = await f.platform('GET', channels)
    expect(listed.json<{ Channels: { name: string }[] }>().Channels.map((c) => c.name)).toEqual(['Kept'])
  })
})
