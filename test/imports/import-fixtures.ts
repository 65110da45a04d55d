import { expect } from 'vitest'
import type { TestAccount, TestContext } from '../helpers/test-app.js'
import { client, createProject, createSite, type Client, type Response, type SiteJson } from '../platform/fixtures.js'
import { JSON_API, NDJSON } from '../stream/stream-fixtures.js'

// Set-up for the import and run tests: everything through HTTP, as an integrator would do it.

export interface ImportFixture {
  c: Client
  account: TestAccount
  site: SiteJson
  platform(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, payload?: object): Promise<Response>
  createStream(type?: 'chunked' | 'referenced'): Promise<string>
  attach(streamId: string, body?: Record<string, unknown>): Promise<number>
  upload(streamId: string, rows: object[] | string, headers?: Record<string, string>): Promise<Response>
  deleteProducts(streamId: string, ids: string[] | 'all'): Promise<Response>
  /** POST /process, then polls the status until the run ended; returns the pid and final status. */
  run(action?: string, body?: Record<string, unknown>): Promise<{ pid: string; status: string; message: string }>
  process(body: Record<string, unknown>): Promise<Response>
  waitFor(pid: string, statuses?: string[]): Promise<{ status: string; message: string }>
  stage(): Promise<{ columns: string[]; rows: Record<string, string>[] }>
  errors(pid?: string): Promise<{ error: string; type: string; classification: string; message: string; data: string; pid: string }[]>
}

let counter = 0

export async function importFixture(t: TestContext, siteBody: Record<string, unknown> = {}, existing?: Client): Promise<ImportFixture> {
  const c = existing ?? (await client(t))
  const project = await createProject(c)
  const site = await createSite(c, { title: `Shop ${++counter}`, project_id: project.id, ...siteBody })
  const platform = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, payload?: object) =>
    t.request({ method, url: `/platform/v2${path}`, headers: c.account.platform, ...(payload ? { payload } : {}) })
  const bearer = { ...c.account.bearer, accept: JSON_API }
  const fixture: ImportFixture = {
    c,
    account: c.account,
    site,
    platform,
    createStream: async (type = 'chunked') => {
      const response = await t.request({
        method: 'POST',
        url: '/streams',
        headers: { ...bearer, 'content-type': JSON_API },
        payload: { data: { type: 'stream', attributes: { name: `import-${++counter}-${Math.random().toString(36).slice(2, 8)}`, type } } },
      })
      expect(response.statusCode, response.body).toBe(201)
      return response.json<{ data: { id: string } }>().data.id
    },
    attach: async (streamId, body = {}) => {
      const response = await platform('POST', `/sites/${site.id}/streams`, { import_type: 1, description: 'feed', stream_id: Number(streamId), status: 'active', ...body })
      expect(response.statusCode, response.body).toBe(201)
      return response.json<{ Sources: { id: number }[] }>().Sources[0]?.id ?? 0
    },
    upload: (streamId, rows, headers = NDJSON) =>
      t.request({
        method: 'POST',
        url: `/streams/${streamId}/products`,
        headers: { ...bearer, ...headers },
        payload: typeof rows === 'string' ? rows : rows.map((row) => JSON.stringify(row)).join('\n'),
      }),
    deleteProducts: (streamId, ids) =>
      t.request({
        method: 'DELETE',
        url: ids === 'all' ? `/streams/${streamId}/products?all=true` : `/streams/${streamId}/products`,
        headers: { ...bearer, ...(ids === 'all' ? {} : NDJSON) },
        ...(ids === 'all' ? {} : { payload: ids.map((id) => JSON.stringify({ id })).join('\n') }),
      }),
    process: (body) => platform('POST', `/process/${site.id}`, body),
    waitFor: async (pid, statuses = ['success', 'failed']) => {
      for (let attempt = 0; attempt < 400; attempt++) {
        const response = await platform('GET', `/sites/${site.id}/status/${pid}`)
        expect(response.statusCode, response.body).toBe(200)
        const body = response.json<{ status: string; message: string }>()
        if (statuses.includes(body.status)) return body
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      throw new Error(`run ${pid} did not reach ${statuses.join('/')}`)
    },
    run: async (action = 'import', body = {}) => {
      const response = await fixture.process({ action, ...body })
      expect(response.statusCode, response.body).toBe(200)
      const pid = response.json<{ process_id: string }>().process_id
      return { pid, ...(await fixture.waitFor(pid)) }
    },
    stage: async () => {
      const stage = await t.db.selectFrom('site_stage').selectAll().where('site_id', '=', site.id).where('stage', '=', 'import').executeTakeFirst()
      const rows = await t.db.selectFrom('stage_product').select('data').where('site_id', '=', site.id).where('stage', '=', 'import').orderBy('product_id').execute()
      return { columns: stage?.columns ?? [], rows: rows.map((row) => row.data) }
    },
    errors: async (pid) => {
      const response = await platform('GET', `/sites/${site.id}/errors${pid ? `?pid=${pid}` : ''}`)
      expect(response.statusCode, response.body).toBe(200)
      return response.json<{ Errors: { error: string; type: string; classification: string; message: string; data: string; pid: string }[] }>().Errors
    },
  }
  return fixture
}

export interface BatchView {
  id: string
  attributes: { status: string; errorCount: number; stages: { upload: { successCount: number }; processing: { status: string; successCount: number; errorCount: number; completedAt: string; errors: { message: string; occurrences: number }[] } | null } }
}

/** GET /streams/{id}/batches/{batchId} with the account's bearer token. */
export async function readBatch(t: TestContext, f: ImportFixture, streamId: string, batchId: string): Promise<BatchView> {
  const response = await t.request({ method: 'GET', url: `/streams/${streamId}/batches/${batchId}`, headers: { ...f.account.bearer, accept: JSON_API } })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ data: BatchView }>().data
}

export function batchIdOf(response: Response): string {
  expect(response.statusCode, response.body).toBe(202)
  return response.json<{ data: { id: string } }>().data.id
}
