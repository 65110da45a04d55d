import type { Readable } from 'node:stream'
import { expect } from 'vitest'
import type { TestAccount, TestContext } from '../helpers/test-app.js'

// Shared shapes and helpers for the stream interface tests. Requests go through HTTP (app.inject);
// stored rows are read through `t.db` only where the interface cannot show them.

export type Response = Awaited<ReturnType<TestContext['request']>>
export type Headers = Record<string, string>
export type Body = string | Buffer | Readable

/** Rate limits high enough that no functional test ever meets them. */
export const HIGH_LIMITS = {
  RATE_LIMIT_OTHER: '100000',
  RATE_LIMIT_PRODUCTS: '100000',
  RATE_LIMIT_BATCHES: '100000',
  // Files that test what many uploads of one account do to the pool lift the fair-share limits.
  UPLOADS_PER_ACCOUNT: '1000',
  UPLOAD_CONCURRENCY: '99',
  DB_POOL_SIZE: '200',
}

export const JSON_API = 'application/vnd.api+json'
export const NDJSON: Headers = { 'content-type': 'application/x-ndjson' }
export const JSON_BODY: Headers = { 'content-type': 'application/json' }
/** ISO 8601 with offset and no fraction (COMPAT.md). */
export const ISO_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
export const DAY_MS = 86_400_000

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

export interface ErrorJson {
  status: string
  title: string
  detail?: string
  meta?: Record<string, unknown>
}

/** One account's bearer token and the requests of the stream interface made with it. */
export interface StreamClient {
  account: TestAccount
  headers: Headers
  send(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: Body | object, headers?: Headers): Promise<Response>
  createStream(name?: string, type?: string): Promise<StreamJson>
  upload(streamId: string, body: Body, headers?: Headers, method?: 'POST' | 'PUT' | 'PATCH'): Promise<Response>
  batches(streamId: string): Promise<BatchJson[]>
}

let counter = 0
/** A stream name no other test uses. */
export function uniqueName(prefix = 'stream'): string {
  counter++
  return `${prefix}-${counter}-${Math.random().toString(36).slice(2, 8)}`
}

export async function streamClient(t: TestContext, name?: string): Promise<StreamClient> {
  const account = await t.account(name)
  const headers = account.bearer
  const send: StreamClient['send'] = (method, url, payload, extra = {}) =>
    t.request({ method, url, headers: { ...headers, ...extra }, ...(payload === undefined ? {} : { payload }) })
  return {
    account,
    headers,
    send,
    async createStream(streamName = uniqueName(), type) {
      const attributes = type === undefined ? { name: streamName } : { name: streamName, type }
      const response = await send('POST', '/streams', { data: { type: 'stream', attributes } }, { 'content-type': JSON_API })
      expect(response.statusCode, response.body).toBe(201)
      return response.json<{ data: StreamJson }>().data
    },
    upload: (streamId, body, extra = NDJSON, method = 'POST') => send(method, `/streams/${streamId}/products`, body, extra),
    async batches(streamId) {
      const response = await send('GET', `/streams/${streamId}/batches`)
      expect(response.statusCode, response.body).toBe(200)
      return response.json<{ data: BatchJson[] }>().data
    },
  }
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

/** Rows stored for a stream's batches, in upload order (read through the database). */
export async function storedRows(t: TestContext, streamId: string) {
  return t.db
    .selectFrom('batch_row')
    .innerJoin('batch', 'batch.id', 'batch_row.batch_id')
    .select(['batch_row.batch_id', 'batch_row.line_no', 'batch_row.product_id', 'batch_row.data'])
    .where('batch.stream_id', '=', streamId)
    .orderBy('batch.seq')
    .orderBy('batch_row.line_no')
    .execute()
}

/** Batches, rows (with or without a surviving batch) and referenced payload chunks of one stream. */
export async function storedCounts(t: TestContext, streamId: string): Promise<{ batches: number; rows: number; payloadChunks: number }> {
  const batchIds = t.db.selectFrom('batch').select('id').where('stream_id', '=', streamId)
  const [batches, rows, chunks] = await Promise.all([
    t.db.selectFrom('batch').select((eb) => eb.fn.countAll<string>().as('n')).where('stream_id', '=', streamId).executeTakeFirstOrThrow(),
    // batch_row has no foreign key: count rows of every batch the stream ever had, and orphans of its account.
    t.db
      .selectFrom('batch_row')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where((eb) => eb.or([eb('batch_id', 'in', batchIds), eb('batch_id', 'not in', t.db.selectFrom('batch').select('id'))]))
      .executeTakeFirstOrThrow(),
    t.db.selectFrom('batch_payload').select((eb) => eb.fn.countAll<string>().as('n')).where('batch_id', 'in', batchIds).executeTakeFirstOrThrow(),
  ])
  return { batches: Number(batches.n), rows: Number(rows.n), payloadChunks: Number(chunks.n) }
}

/** Asserts that a stream holds no batch and no row, seen through the API and the database. */
export async function expectNothingStored(t: TestContext, c: StreamClient, streamId: string): Promise<void> {
  expect(await c.batches(streamId)).toEqual([])
  expect(await storedCounts(t, streamId)).toEqual({ batches: 0, rows: 0, payloadChunks: 0 })
}

/** NDJSON text of the given rows, one per line, ending with a newline. */
export function ndjson(rows: object[]): string {
  return rows.map((row) => JSON.stringify(row)).join('\n') + '\n'
}
