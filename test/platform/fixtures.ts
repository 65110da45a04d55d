import { expect } from 'vitest'
import type { TestAccount, TestContext } from '../helpers/test-app.js'

// Shared shapes and set-up for the platform tests. Every helper goes through HTTP only.

export type Response = Awaited<ReturnType<TestContext['request']>>
export type Links = Record<string, string>[]

export interface ProjectJson {
  id: string
  name: string
  created_at: string
  links: Links
}

export interface SiteJson {
  id: string
  title: string
  project_id: string
  status: string
  import_schedule: string
  id_column: string
  processing_status: string
  created_at: string
  links: Links
  availableProjectIds: string[]
}

export interface TagJson {
  id: string
  key: string
  value: string
  readonly: string
}

export interface ErrorJson {
  success: boolean
  message: string
}

export const TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/
export const BASE = 'http://localhost:80'
export const NOT_FOUND = { success: false, message: 'The requested resource could not be found' }
export const UNAUTHORIZED = { success: false, message: 'Unauthorized' }

/** Requests below /platform/v2 with one account's X-Auth-Token. */
export interface Client {
  account: TestAccount
  get(path: string): Promise<Response>
  post(path: string, payload?: object): Promise<Response>
  put(path: string, payload?: object): Promise<Response>
  del(path: string): Promise<Response>
}

export async function client(t: TestContext, name?: string): Promise<Client> {
  const account = await t.account(name)
  const send = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, payload?: object) =>
    t.request({ method, url: `/platform/v2${path}`, headers: account.platform, ...(payload === undefined ? {} : { payload }) })
  return {
    account,
    get: (path) => send('GET', path),
    post: (path, payload) => send('POST', path, payload),
    put: (path, payload) => send('PUT', path, payload),
    del: (path) => send('DELETE', path),
  }
}

export function only<T>(items: T[] | undefined): T {
  expect(items).toHaveLength(1)
  const [item] = items ?? []
  if (item === undefined) throw new Error('expected one item')
  return item
}

/** Asserts an error status with the platform error body; `message` must match when given. */
export function expectError(response: Response, status: number, message?: RegExp | string): string {
  expect(response.statusCode, response.body).toBe(status)
  const body = response.json<ErrorJson>()
  expect(body).toEqual({ success: false, message: expect.any(String) })
  if (message !== undefined) expect(body.message).toMatch(message)
  return body.message
}

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

export async function createTag(c: Client, siteId: string, body: Record<string, unknown>): Promise<TagJson> {
  const response = await c.post(`/sites/${siteId}/tags`, body)
  expect(response.statusCode, response.body).toBe(201)
  return only(response.json<{ Tags: TagJson[] }>().Tags)
}

export function sitesOf(response: Response): SiteJson[] {
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ success: boolean; Sites: SiteJson[] }>().Sites
}

export function tagsOf(response: Response): TagJson[] {
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ Tags: TagJson[] }>().Tags
}

export async function readSite(c: Client, segment: string): Promise<SiteJson> {
  return only(sitesOf(await c.get(`/sites/${segment}`)))
}

export async function listTags(c: Client, siteId: string): Promise<TagJson[]> {
  return tagsOf(await c.get(`/sites/${siteId}/tags`))
}
