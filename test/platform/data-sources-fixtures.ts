import { expect } from 'vitest'
import type { TestAccount, TestContext } from '../helpers/test-app.js'
import { JSON_API } from '../stream/stream-fixtures.js'
import { client, createProject, createSite, type Client, type Response, type SiteJson } from './fixtures.js'

// Shapes and set-up for the site stream data source tests (SPEC.md "Platform: site stream data
// sources"). Everything goes through HTTP: streams through the stream interface, the rest through
// /platform/v2.

export interface SourceJson {
  id: number
  site_id: number
  description: string
  source: string
  import_type: number
  import_id: number
  status: string
  settings: string[]
  stream_id: number
  import_empty: boolean
}

export interface CursorJson {
  current: number
  prev: number
  next: number
  count: number
}

export interface SourcesJson {
  success: boolean
  Sources: SourceJson[]
  meta: { cursor: CursorJson }
}

/** The two credentials these endpoints accept (SPEC.md section 5). */
export type Credential = 'x-auth-token' | 'bearer'
export const CREDENTIALS: Credential[] = ['x-auth-token', 'bearer']

export function headersFor(account: TestAccount, credential: Credential): Record<string, string> {
  return credential === 'x-auth-token' ? account.platform : { ...account.bearer, accept: 'application/json' }
}

/** One account with a project, a site (reference `erp:<title>`) and a stream of its own. */
export interface Fixture {
  c: Client
  account: TestAccount
  site: SiteJson
  streamId: string
  /** A request below /platform/v2 with the chosen credential. */
  send(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, payload?: object, credential?: Credential): Promise<Response>
}

let streams = 0

/** Creates a stream through the stream interface (POST /streams, bearer) and returns its id. */
export async function createStream(t: TestContext, account: TestAccount, name = `feed-${++streams}-${Math.random().toString(36).slice(2, 8)}`): Promise<string> {
  const response = await t.request({
    method: 'POST',
    url: '/streams',
    headers: { ...account.bearer, 'content-type': JSON_API },
    payload: { data: { type: 'stream', attributes: { name } } },
  })
  expect(response.statusCode, response.body).toBe(201)
  const id = response.json<{ data: { id: string } }>().data.id
  expect(id).toMatch(/^[1-9]\d*$/)
  return id
}

export async function fixture(t: TestContext, title = 'Shop', accountName?: string): Promise<Fixture> {
  const c = await client(t, accountName)
  const project = await createProject(c, `${title} project`)
  const site = await createSite(c, { title, project_id: project.id, reference: `erp:${title.toLowerCase()}` })
  const streamId = await createStream(t, c.account)
  return {
    c,
    account: c.account,
    site,
    streamId,
    send: (method, path, payload, credential = 'x-auth-token') =>
      t.request({ method, url: `/platform/v2${path}`, headers: headersFor(c.account, credential), ...(payload === undefined ? {} : { payload }) }),
  }
}

/** A create body with all four required fields. */
export function sourceBody(streamId: string | number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { import_type: 1, description: 'Main feed', stream_id: Number(streamId), status: 'active', ...overrides }
}

/** Asserts the envelope `{success: true, Sources, meta}` with the given status and returns it. */
export function sourcesOf(response: Response, status = 200): SourcesJson {
  expect(response.statusCode, response.body).toBe(status)
  const body = response.json<SourcesJson>()
  expect(Object.keys(body).sort()).toEqual(['Sources', 'meta', 'success'])
  expect(body.success).toBe(true)
  expect(Array.isArray(body.Sources)).toBe(true)
  return body
}

/** The one data source of a create, read or update response. */
export function oneSource(response: Response, status = 200): SourceJson {
  const body = sourcesOf(response, status)
  expect(body.Sources).toHaveLength(1)
  expect(body.meta).toEqual({ cursor: { current: 0, prev: 0, next: 0, count: 1 } })
  const [source] = body.Sources
  if (source === undefined) throw new Error('expected one data source')
  return source
}

export async function createSource(f: Fixture, body: Record<string, unknown> = sourceBody(f.streamId), segment = f.site.id): Promise<SourceJson> {
  return oneSource(await f.send('POST', `/sites/${segment}/streams`, body), 201)
}

/** Every data source of a site, read in one page. */
export async function listSources(f: Fixture, segment = f.site.id): Promise<SourceJson[]> {
  return sourcesOf(await f.send('GET', `/sites/${segment}/streams?limit=1000`)).Sources
}
