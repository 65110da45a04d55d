import { expect } from 'vitest'
import type { Response } from './inject.js'

// What the two interfaces answer, as tests see it: the JSON shapes, the patterns of their values, and
// the assertions on a response that many files make.

export type Links = Record<string, string>[]

export const TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/
export const BASE = 'http://localhost:80'
export const NOT_FOUND = { success: false, message: 'The requested resource could not be found' }
export const UNAUTHORIZED = { success: false, message: 'Unauthorized' }
/** ISO 8601 with offset and no fraction (docs/compatibility.md). */
export const ISO_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
export const DAY_MS = 86_400_000

// ---- platform interface (/platform/v2)

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

export interface PlatformErrorJson {
  success: boolean
  message: string
}

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

export interface ChannelJson {
  id: string
  site_id: string
  channel_id: string
  name: string
  export_name: string
  active: boolean
  format: string
  mapping: Record<string, string>[]
  filter: string
  filename: string | null
  filenames: { type: string | null; filename: string }[]
  feed_destinations: Record<string, { destination_id: number; name: string | null; destination_name: string | null; active: boolean; urls: string[] }>
  safety_max_drop: number | null
  safety_max_left_out: number | null
  safety_min_products: number | null
  export_status: 'not_exported' | 'published' | 'held'
  hold: HoldJson | null
  links: Record<string, string>[]
}

export interface HoldJson {
  pid: string
  reason: 'drop' | 'left_out'
  message: string
  held_at: string
  products: number
  products_previous: number | null
  products_checked: number
  products_left_out: number
  threshold: number
  min_products: number
  links: Record<string, string>[]
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
  const body = response.json<PlatformErrorJson>()
  expect(body).toEqual({ success: false, message: expect.any(String) })
  if (message !== undefined) expect(body.message).toMatch(message)
  return body.message
}

export function sitesOf(response: Response): SiteJson[] {
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ success: boolean; Sites: SiteJson[] }>().Sites
}

export function tagsOf(response: Response): TagJson[] {
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ Tags: TagJson[] }>().Tags
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

/** The built-in destination's URLs of a channel (one per exported file), as paths for inject. */
export function feedPaths(channel: ChannelJson): string[] {
  const feed = Object.values(channel.feed_destinations).find((d) => d.destination_id === 1)
  return (feed?.urls ?? []).map((url) => new URL(url).pathname)
}

// ---- stream interface (JSON:API)

export interface StreamJson {
  type: 'stream'
  id: string
  attributes: { name: string; type: string; status: string; createdAt: string; updatedAt: string }
  relationships: { account: { data: { type: 'account'; id: string } } }
}

export interface StageErrorJson {
  message: string
  occurrences: number
  example: { lineNumber: number; value: string }
}

export interface StageJson {
  completedAt: string
  status: string
  successCount: number
  errorCount: number
  errors: StageErrorJson[]
}

export interface BatchJson {
  type: 'batch'
  id: string
  attributes: { status: string; errorCount: number; stages: { upload: StageJson; processing: StageJson | null } }
  relationships: { stream: { data: { type: 'stream'; id: string } } }
}

export interface PageLinksJson {
  self: string
  first: string
  last: string
  prev?: string
  next?: string
}

/** One error of a JSON:API error document. */
export interface ErrorJson {
  status: string
  title: string
  detail?: string
  meta?: Record<string, unknown>
}

/** Asserts a 202 (or the given status) with a batch document and returns the batch. */
export function expectBatch(response: Response, status = 202): BatchJson {
  expect(response.statusCode, response.body).toBe(status)
  expect(response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/)
  const batch = response.json<{ data: BatchJson }>().data
  expect(batch.type).toBe('batch')
  expect(batch.id).toMatch(UUID)
  return batch
}

/** The id of the batch a 202 answers. */
export function batchIdOf(response: Response): string {
  expect(response.statusCode, response.body).toBe(202)
  return response.json<{ data: { id: string } }>().data.id
}

/** Asserts a JSON:API error document with one error of this status; returns the error. */
export function expectApiError(response: Response, status: number, detail?: RegExp): ErrorJson {
  expect(response.statusCode, response.body).toBe(status)
  expect(response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/)
  const body = response.json<{ errors: ErrorJson[] }>()
  expect(Object.keys(body)).toEqual(['errors'])
  expect(body.errors).toHaveLength(1)
  const [error] = body.errors
  if (!error) throw new Error('expected one error')
  expect(error.status).toBe(String(status))
  expect(typeof error.title).toBe('string')
  expect(error.title).not.toBe('')
  if (detail !== undefined) expect(error.detail).toMatch(detail)
  return error
}

/** The upload stage's errors keyed by message (their order is not specified). */
export function errorsByMessage(stage: StageJson): Record<string, Omit<StageErrorJson, 'message'>> {
  const byMessage: Record<string, Omit<StageErrorJson, 'message'>> = {}
  for (const { message, ...rest } of stage.errors) {
    expect(byMessage[message], `message ${message} listed twice`).toBeUndefined()
    byMessage[message] = rest
  }
  return byMessage
}
