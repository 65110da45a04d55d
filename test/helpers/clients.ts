import type { Readable } from 'node:stream'
import { expect } from 'vitest'
import type { TestAccount, TestContext } from './test-app.js'
import { jsonRequest, type Response } from './inject.js'
import { oneSource, only, sitesOf, sourcesOf, tagsOf } from './responses.js'
import type { BatchJson, ChannelJson, ProjectJson, SiteJson, SourceJson, StreamJson, TagJson } from './responses.js'

// The clients tests talk to the app with: every request goes through a real route (app.inject).
// State a test is not about is seeded with the factories (factories.ts) instead.

export { jsonRequest, type Response }
export type Headers = Record<string, string>
export type Body = string | Buffer | Readable

export const JSON_API = 'application/vnd.api+json'
export const NDJSON: Headers = { 'content-type': 'application/x-ndjson' }
export const JSON_BODY: Headers = { 'content-type': 'application/json' }

/** app.inject whose response also parses its JSON body. */

let counter = 0
/** A name no other test uses. */
export function uniqueName(prefix = 'stream'): string {
  counter++
  return `${prefix}-${counter}-${Math.random().toString(36).slice(2, 8)}`
}

/** NDJSON text of the given rows, one per line, ending with a newline. */
export function ndjson(rows: object[]): string {
  return rows.map((row) => JSON.stringify(row)).join('\n') + '\n'
}

// ---- platform interface

/** The two credentials the platform's data-source endpoints accept (docs/interface.md section 5). */
export type Credential = 'x-auth-token' | 'bearer'
export const CREDENTIALS: Credential[] = ['x-auth-token', 'bearer']

export function headersFor(account: TestAccount, credential: Credential): Headers {
  return credential === 'x-auth-token' ? account.platform : { ...account.bearer, accept: 'application/json' }
}

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'

/** Requests below /platform/v2 with one account's X-Auth-Token (or, when asked, its bearer token). */
export interface Client {
  account: TestAccount
  send(method: Method, path: string, payload?: object, credential?: Credential): Promise<Response>
  get(path: string): Promise<Response>
  post(path: string, payload?: object): Promise<Response>
  put(path: string, payload?: object): Promise<Response>
  del(path: string): Promise<Response>
}

export function platformClient(t: TestContext, account: TestAccount): Client {
  const send: Client['send'] = (method, path, payload, credential = 'x-auth-token') =>
    t.request({ method, url: `/platform/v2${path}`, headers: headersFor(account, credential), ...(payload === undefined ? {} : { payload }) })
  return {
    account,
    send,
    get: (path) => send('GET', path),
    post: (path, payload) => send('POST', path, payload),
    put: (path, payload) => send('PUT', path, payload),
    del: (path) => send('DELETE', path),
  }
}

/** A new account and its platform client. */
export async function client(t: TestContext, name?: string): Promise<Client> {
  return platformClient(t, await t.account(name))
}

// Requests whose answers many tests read. Where the request itself is under test, a test sends it.

export async function createProject(c: Client, name = 'Shop'): Promise<ProjectJson> {
  const response = await c.post('/projects', { name })
  expect(response.statusCode, response.body).toBe(201)
  return only(response.json<{ Projects: ProjectJson[] }>().Projects)
}

export async function createSite(c: Client, body: Record<string, unknown>): Promise<SiteJson> {
  const response = await c.post('/sites', body)
  expect(response.statusCode, response.body).toBe(201)
  return only(response.json<{ Sites: SiteJson[] }>().Sites)
}

export async function readSite(c: Client, segment: string): Promise<SiteJson> {
  return only(sitesOf(await c.get(`/sites/${segment}`)))
}

export async function createTag(c: Client, siteId: string, body: Record<string, unknown>): Promise<TagJson> {
  const response = await c.post(`/sites/${siteId}/tags`, body)
  expect(response.statusCode, response.body).toBe(201)
  return only(response.json<{ Tags: TagJson[] }>().Tags)
}

export async function listTags(c: Client, siteId: string): Promise<TagJson[]> {
  return tagsOf(await c.get(`/sites/${siteId}/tags`))
}

/** A site and the client of its account: what the site-scoped helpers below need. */
export interface SiteScope {
  c: Client
  site: { id: string }
}

export async function createChannel(f: SiteScope, body: Record<string, unknown>): Promise<ChannelJson> {
  const response = await f.c.post(`/sites/${f.site.id}/channels`, { name: 'Google', export_name: 'google-shopping', ...body })
  expect(response.statusCode, response.body).toBe(201)
  return only(response.json<{ Channels: ChannelJson[] }>().Channels)
}

export async function readChannel(f: SiteScope, id: string): Promise<ChannelJson> {
  const response = await f.c.get(`/sites/${f.site.id}/channels/${id}`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ Channels: ChannelJson[] }>().Channels[0] as ChannelJson
}

/** The export history of a channel. */
export async function history(f: SiteScope, id: string): Promise<Record<string, string>[]> {
  const response = await f.c.get(`/sites/${f.site.id}/channels/${id}/history`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ Channels: (ChannelJson & { history: Record<string, string>[] })[] }>().Channels[0]?.history ?? []
}

/** A create body of a data source with all four required fields. */
export function sourceBody(streamId: string | number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { import_type: 1, description: 'Main feed', stream_id: Number(streamId), status: 'active', ...overrides }
}

/** What the data-source helpers need: a site, a stream of the same account and a way to send. */
export interface SourceScope {
  site: { id: string }
  streamId: string
  send(method: Method, path: string, payload?: object, credential?: Credential): Promise<Response>
}

export async function createSource(f: SourceScope, body: Record<string, unknown> = sourceBody(f.streamId), segment = f.site.id): Promise<SourceJson> {
  return oneSource(await f.send('POST', `/sites/${segment}/streams`, body), 201)
}

/** Every data source of a site, read in one page. */
export async function listSources(f: SourceScope, segment = f.site.id): Promise<SourceJson[]> {
  return sourcesOf(await f.send('GET', `/sites/${segment}/streams?limit=1000`)).Sources
}

/** A GET without credentials (feed files). */
export async function download(t: TestContext, path: string, headers: Headers = {}): Promise<Response> {
  return t.request({ method: 'GET', url: path, headers })
}

// ---- stream interface

/** One account's bearer token and the requests of the stream interface made with it. */
export interface StreamClient {
  account: TestAccount
  headers: Headers
  send(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: Body | object, headers?: Headers): Promise<Response>
  upload(streamId: string, body: Body, headers?: Headers, method?: 'POST' | 'PUT' | 'PATCH'): Promise<Response>
  batches(streamId: string): Promise<BatchJson[]>
}

export function streamClientOf(t: TestContext, account: TestAccount): StreamClient {
  const headers = account.bearer
  const send: StreamClient['send'] = (method, url, payload, extra = {}) =>
    t.request({ method, url, headers: { ...headers, ...extra }, ...(payload === undefined ? {} : { payload }) })
  return {
    account,
    headers,
    send,
    upload: (streamId, body, extra = NDJSON, method = 'POST') => send(method, `/streams/${streamId}/products`, body, extra),
    async batches(streamId) {
      const response = await send('GET', `/streams/${streamId}/batches`)
      expect(response.statusCode, response.body).toBe(200)
      return response.json<{ data: BatchJson[] }>().data
    },
  }
}

/** A new account and its stream client. */
export async function streamClient(t: TestContext, name?: string): Promise<StreamClient> {
  return streamClientOf(t, await t.account(name))
}

/** GET /streams/{id}/batches/{batchId} with the account's bearer token. */
export async function readBatch(t: TestContext, f: { account: TestAccount }, streamId: string, batchId: string): Promise<BatchJson> {
  const response = await t.request({ method: 'GET', url: `/streams/${streamId}/batches/${batchId}`, headers: { ...f.account.bearer, accept: JSON_API } })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ data: BatchJson }>().data
}

/**
 * POST /streams, for tests whose behaviour is that request (or what it counts, e.g. rate limits);
 * a stream that is only set-up is seeded with `given.stream`.
 */
export async function postStream(c: StreamClient, name = uniqueName(), type?: string): Promise<StreamJson> {
  const attributes = type === undefined ? { name } : { name, type }
  const response = await c.send('POST', '/streams', { data: { type: 'stream', attributes } }, { 'content-type': JSON_API })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ data: StreamJson }>().data
}
