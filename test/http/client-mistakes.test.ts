import { describe, expect, it } from 'vitest'
import { registeredRoutes } from '../helpers/registered-routes.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { JSON_API } from '../helpers/clients.js'
import { recordUpload } from '../webhooks/receiver.js'

// Walks every route of both interfaces and the feed route with the values clients get wrong (NUL,
// numbers beyond 64 bits, texts of 10,000 characters) in path segments, query parameters and body
// fields: each answer is below 500 and a 4xx comes in the interface's own error body.
// A webhook on loopback is among the resources walked (never delivered to: no delivery worker runs).
const t = useTestApp({ ...HIGH_LIMITS, ALLOW_PRIVATE_DESTINATIONS: 'true', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_CONCURRENCY: '0' })

const NUL = 'a\u0000b'
const HUGE_NUMBERS = ['1e20', '9223372036854775807', '99999999999999999999']
const LONG = 'k'.repeat(10_000)
// Parameters that name a client's own text: `1e20` is as good a product id as any.
const FREE_TEXT_PARAMS = new Set(['productId'])
const PATH_VALUES = [NUL, '\u0000', 'a\u0000:b', ...HUGE_NUMBERS, '-1', 'x'.repeat(900)]
const QUERY_NAMES = ['offset', 'limit', 'cursor', 'previous', 'pid', 'page[offset]', 'page[limit]', 'hidden', 'filter', 'fields', 'fields[0]', 'all']
const QUERY_VALUES = [NUL, ...HUGE_NUMBERS, '-1', LONG]
const BODY_VALUES: unknown[] = [NUL, LONG, 1e20, 9223372036854775807n.toString(), -1, [NUL], { [NUL]: NUL }]

interface Route {
  method: string
  path: string
}

// Ids of real resources, so that a mistake in one part of a request is met by code that has found
// everything else it names.
interface Ids {
  [param: string]: string
}

async function realIds(f: ImportFixture): Promise<Ids> {
  const streamId = await f.createStream()
  const sourceId = await f.attach(streamId)
  const upload = await f.upload(streamId, [{ id: 'p1', title: 'one' }])
  const run = await f.run('import')
  const tag = await f.platform('POST', `/sites/${f.site.id}/tags`, { key: 'walk', value: 'v' })
  const channel = await f.platform('POST', `/sites/${f.site.id}/channels`, { name: 'Walk', export_name: 'walk' })
  const channelJson = channel.json<{ Channels: { id: string; feed_destinations: Record<string, { urls?: string[] }> }[] }>()
  const webhook = await f.platform('POST', '/webhooks', { url: 'http://127.0.0.1:9/hooks' })
  const webhookId = webhook.json<{ Webhooks: { id: string }[] }>().Webhooks[0]?.id ?? ''
  await recordUpload(t.db, f.account.accountId)
  const delivery = await f.platform('GET', `/webhooks/${webhookId}/deliveries`)
  const rule = await f.platform('POST', `/sites/${f.site.id}/rules`, { attribute: 'title', then: [{ action: 'trim' }] })
  const fetched = await f.platform('POST', `/sites/${f.site.id}/sources`, { type: 'feed_url', url: 'http://127.0.0.1:9/catalog.csv' })
  return {
    projectId: f.site.project_id,
    siteId: f.site.id,
    tagId: tag.json<{ Tags: { id: string }[] }>().Tags[0]?.id ?? '',
    channelId: channelJson.Channels[0]?.id ?? '',
    // Its built-in feed destination: a test of it is a 400 (only file servers are tested).
    destinationId: Object.keys(channelJson.Channels[0]?.feed_destinations ?? {})[0] ?? '',
    streamId,
    dataSourceId: String(sourceId),
    // A feed URL source: hostile changes meet a fetched source's checks.
    sourceId: String(fetched.json<{ Sources: { id: number }[] }>().Sources[0]?.id ?? ''),
    batchId: upload.json<{ data: { id: string } }>().data.id,
    pid: run.pid,
    stageName: 'intermediate',
    stageId: '0',
    productId: 'p1',
    token: 'no-such-token',
    filename: 'walk.csv',
    name: 'google_shopping',
    webhookId,
    deliveryId: delivery.json<{ Deliveries: { id: string }[] }>().Deliveries[0]?.id ?? '',
    // A site rule: under a channel's path the same id is another scope's, and a 404.
    ruleId: rule.json<{ Rules: { id: string }[] }>().Rules[0]?.id ?? '',
  }
}

function routesToWalk(): Route[] {
  return registeredRoutes(t.app.printRoutes({ commonPrefix: false })).filter(
    // The console answers in HTML, not an interface's error body: test/console/console-mistakes.test.ts walks it.
    // Its icon at /favicon.ico is a file that reads nothing of the request.
    ({ method, path }) =>
      method !== 'HEAD' && method !== 'OPTIONS' && !/^\/(docs|openapi\.json|healthz|console)?(\/|\*|$)/.test(path) && path !== '/' && path !== '/favicon.ico',
  )
}

function fill(path: string, ids: Ids, hostile?: { param: string; value: string }): string {
  return path.replace(/:(\w+)/g, (_match, param: string) => {
    const value = hostile?.param === param ? hostile.value : ids[param === 'streamId' && path.includes('/sites/') ? 'dataSourceId' : param]
    if (value === undefined) throw new Error(`no id for :${param} in ${path}`)
    return encodeURIComponent(value)
  })
}

function headersFor(path: string, f: ImportFixture): Record<string, string> {
  if (path.startsWith('/streams')) return { ...f.account.bearer, accept: JSON_API, 'content-type': JSON_API }
  return { ...f.account.platform, 'content-type': 'application/json' }
}

/** Asserts what every answer to a client's mistake must be; returns the status. */
function expectClientAnswer(what: string, path: string, response: { statusCode: number; body: string; headers: Record<string, unknown> }): number {
  expect(response.statusCode, `${what}: ${response.body.slice(0, 300)}`).toBeLessThan(500)
  if (response.statusCode < 400) return response.statusCode
  const body = JSON.parse(response.body) as Record<string, unknown>
  if (path.startsWith('/streams')) {
    expect(body, what).toEqual({ errors: [expect.objectContaining({ status: String(response.statusCode), title: expect.any(String) })] })
    expect(String(response.headers['content-type']), what).toMatch(/^application\/vnd\.api\+json/)
  } else {
    expect(body, what).toEqual({ success: false, message: expect.any(String) })
  }
  expect(response.body, what).not.toMatch(/\bat .+\.(ts|js):\d+|node_modules|DatabaseError/)
  return response.statusCode
}

// Each test walks every route with dozens of values: thousands of requests, given minutes on a loaded machine.
describe('every route, with the values clients get wrong', { timeout: 180_000 }, () => {
  it('answers hostile path segments with a 4xx in the interface body', async () => {
    const f = await importFixture(t)
    const ids = await realIds(f)
    const walked = routesToWalk()
    expect(walked.length).toBeGreaterThan(50)
    for (const route of walked) {
      for (const param of [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1] ?? '')) {
        for (const value of PATH_VALUES) {
          const url = fill(route.path, ids, { param, value })
          const response = await t.request({ method: route.method as 'GET', url, headers: headersFor(route.path, f) })
          const status = expectClientAnswer(`${route.method} ${route.path} :${param}=${JSON.stringify(value).slice(0, 40)}`, route.path, response)
          // No resource has such a name: whatever route, the answer is a refusal, never a success.
          if (value.includes('\u0000') || (HUGE_NUMBERS.includes(value) && !FREE_TEXT_PARAMS.has(param)))
            expect(status, `${route.method} ${url.slice(0, 120)}`).toBeGreaterThanOrEqual(400)
        }
      }
    }
  })

  it('answers hostile query parameters with a 4xx or ignores them, never a 500', async () => {
    const f = await importFixture(t)
    const ids = await realIds(f)
    for (const route of routesToWalk().filter(({ method }) => method === 'GET')) {
      for (const name of QUERY_NAMES) {
        for (const value of QUERY_VALUES) {
          const url = `${fill(route.path, ids)}?${encodeURIComponent(name)}=${encodeURIComponent(value)}`
          const response = await t.request({ method: 'GET', url, headers: headersFor(route.path, f) })
          const status = expectClientAnswer(`GET ${route.path}?${name}=${JSON.stringify(value).slice(0, 40)}`, route.path, response)
          if (value.includes('\u0000')) expect(status, `GET ${url.slice(0, 120)}`).toBeGreaterThanOrEqual(400)
        }
      }
    }
  })

  it('answers hostile body fields with a 4xx naming the field, never a 500, and writes nothing', async () => {
    const f = await importFixture(t)
    const ids = await realIds(f)
    const document = t.app.swagger() as {
      paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> } }>>
    }
    const writes = routesToWalk().filter(({ method, path }) => ['POST', 'PUT', 'PATCH'].includes(method) && !/\/products/.test(path))
    for (const route of writes) {
      const operation = document.paths[route.path.replace(/:(\w+)/g, '{$1}')]?.[route.method.toLowerCase()]
      const fields = Object.keys(operation?.requestBody?.content?.['application/json']?.schema?.properties ?? {})
      for (const field of fields.length > 0 ? fields : ['name']) {
        for (const value of BODY_VALUES) {
          const payload = route.path.startsWith('/streams') ? { data: { type: 'stream', attributes: { name: value, type: value } } } : { [field]: value }
          const what = `${route.method} ${route.path} ${field}=${JSON.stringify(value).slice(0, 40)}`
          const response = await t.request({ method: route.method as 'POST', url: fill(route.path, ids), headers: headersFor(route.path, f), payload })
          const status = expectClientAnswer(what, route.path, response)
          if (value === NUL) {
            expect(status, what).toBeGreaterThanOrEqual(400)
            expect(response.body, what).toMatch(/NUL/)
          }
        }
      }
    }
    // The walk wrote nothing with a NUL: the site's texts read back as they were.
    const site = await f.platform('GET', `/sites/${ids.siteId}`)
    expect(site.body).not.toMatch(/\\u0000/)
  })

  it('refuses NUL in the paths the issue names, in each interface body', async () => {
    const f = await importFixture(t)
    const site = await f.platform('GET', '/sites/a%00:b')
    expect(site.statusCode).toBe(400)
    expect(site.json()).toEqual({ success: false, message: 'siteId: the path parameter must not contain NUL (\\u0000)' })
    const feed = await t.request({ method: 'GET', url: '/feeds/%00/x.csv' })
    expect(feed.statusCode).toBe(400)
    expect(feed.json()).toEqual({ success: false, message: 'token: the path parameter must not contain NUL (\\u0000)' })
    const stream = await t.request({
      method: 'POST',
      url: '/streams',
      headers: { ...f.account.bearer, 'content-type': JSON_API },
      payload: { data: { type: 'stream', attributes: { name: NUL } } },
    })
    expect(stream.statusCode).toBe(400)
    expect(stream.json()).toEqual({ errors: [{ status: '400', title: 'Bad Request', detail: 'data.attributes.name: must not contain NUL (\\u0000)' }] })
  })
})
