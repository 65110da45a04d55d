import { describe, expect, it } from 'vitest'
import type { InjectOptions } from 'fastify'
import { useTestApp } from '../helpers/test-app.js'
import { client, createProject, createSite, listTags, type Client } from '../helpers/clients.js'
import { expectError, only, type ProjectJson, type SiteJson } from '../helpers/responses.js'

const t = useTestApp()

/** A raw request with the account's credential and exactly the extra headers given. */
async function raw(c: Client, options: InjectOptions & { headers?: Record<string, string> }) {
  return t.request({ ...options, headers: { ...c.account.platform, ...options.headers } })
}

async function projectNames(c: Client): Promise<string[]> {
  return (await c.get('/projects')).json<{ Projects: ProjectJson[] }>().Projects.map((p) => p.name)
}

describe('request bodies', () => {
  it('parses a JSON body that arrives without a Content-Type header', async () => {
    const c = await client(t)
    const response = await raw(c, { method: 'POST', url: '/platform/v2/projects', payload: '{"name":"No type"}' })
    expect(response.statusCode, response.body).toBe(201)
    expect(only(response.json<{ Projects: ProjectJson[] }>().Projects).name).toBe('No type')
    expect(await projectNames(c)).toEqual(['No type'])
  })

  it('parses a JSON body sent as text/plain', async () => {
    const c = await client(t)
    const p = await createProject(c)
    const response = await raw(c, {
      method: 'PUT',
      url: `/platform/v2/projects/${p.id}`,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      payload: '{"name":"Plain"}',
    })
    expect(response.statusCode, response.body).toBe(200)
    expect(await projectNames(c)).toEqual(['Plain'])
  })

  it('reads null members as "not given" on creates of projects, sites and tags', async () => {
    const c = await client(t)
    const p = await createProject(c)
    const siteResponse = await c.post(`/projects/${p.id}/sites`, {
      id: null,
      title: 'Nulls',
      reference: null,
      project_id: null,
      id_column: null,
      status: null,
      import_schedule: null,
      created_at: null,
    })
    expect(siteResponse.statusCode, siteResponse.body).toBe(201)
    const site = only(siteResponse.json<{ Sites: SiteJson[] }>().Sites)
    expect(site).toMatchObject({ title: 'Nulls', project_id: p.id, status: 'active', id_column: 'id', import_schedule: '' })
    const tag = await c.post(`/sites/${site.id}/tags`, { id: null, site_id: null, key: 'k', value: 'v', readonly: null })
    expect(tag.statusCode, tag.body).toBe(201)
    expect(await listTags(c, site.id)).toEqual([expect.objectContaining({ key: 'k', value: 'v', readonly: '0' })])
  })

  it('answers 400 {success:false,message} to malformed JSON and creates nothing', async () => {
    const c = await client(t)
    for (const headers of [{ 'content-type': 'application/json' }, {}] as Record<string, string>[]) {
      const response = await raw(c, { method: 'POST', url: '/platform/v2/projects', headers, payload: '{"name": "Broken",' })
      expectError(response, 400, /JSON/)
    }
    expect(await projectNames(c)).toEqual([])
  })

  it('accepts a DELETE that announces JSON but carries no body', async () => {
    const c = await client(t)
    const p = await createProject(c)
    const response = await raw(c, { method: 'DELETE', url: `/platform/v2/projects/${p.id}`, headers: { 'content-type': 'application/json' } })
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toEqual({ success: true })
    expect(await projectNames(c)).toEqual([])
  })

  it('validates an empty POST body as an empty object, naming the missing field', async () => {
    const c = await client(t)
    const response = await raw(c, { method: 'POST', url: '/platform/v2/projects', headers: { 'content-type': 'application/json' } })
    expectError(response, 400, /^name: /)
  })
})

describe('routes', () => {
  it.each([
    ['GET', '/platform/v2/nothing'],
    ['GET', '/platform/v2/sites/1/nothing'],
    ['PATCH', '/platform/v2/projects'],
    ['GET', '/product/v2/nothing'],
  ] as const)('answers an unknown platform route %s %s with 404 in the envelope', async (method, url) => {
    const c = await client(t)
    const response = await raw(c, { method, url })
    expectError(response, 404, `No route ${method} ${url}`)
  })

  it.each(['upload', 'commit', 'discard'])('answers the withdrawn product %s endpoint with 410 naming the stream interface', async (step) => {
    const c = await client(t)
    const p = await createProject(c)
    const site = await createSite(c, { title: 'S', project_id: p.id })
    for (const method of ['POST', 'PUT', 'GET'] as const) {
      const url = `/platform/v2/sites/${site.id}/products/5/${step}`
      const response = await raw(c, { method, url, payload: method === 'GET' ? undefined : '{"products":[]}' })
      expectError(response, 410, /stream interface/)
    }
    const legacy = await raw(c, { method: 'POST', url: '/platform/v2/sites/1/products/5/upload', payload: '[]' })
    expectError(legacy, 410, /stream interface/)
  })

  it('accepts trailing slashes', async () => {
    const c = await client(t)
    const created = await raw(c, { method: 'POST', url: '/platform/v2/projects/', payload: { name: 'Slash' } })
    expect(created.statusCode, created.body).toBe(201)
    const p = only(created.json<{ Projects: ProjectJson[] }>().Projects)
    const site = await createSite(c, { title: 'S', project_id: p.id })
    const reads = [
      await raw(c, { method: 'GET', url: '/platform/v2/projects/' }),
      await raw(c, { method: 'GET', url: `/platform/v2/projects/${p.id}/` }),
      await raw(c, { method: 'GET', url: `/platform/v2/sites/${site.id}/` }),
      await raw(c, { method: 'GET', url: `/platform/v2/sites/${site.id}/tags/` }),
    ]
    expect(reads.map((r) => r.statusCode)).toEqual([200, 200, 200, 200])
    expect(reads[2]?.json<{ Sites: SiteJson[] }>().Sites.map((s) => s.id)).toEqual([site.id])
  })
})
