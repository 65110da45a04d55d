import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/test-app.js'
import { expectError, NOT_FOUND, type ProjectJson } from '../helpers/responses.js'
import { client, createProject, createSite, type Client } from '../helpers/clients.js'

const t = useTestApp()

describe('projects', () => {
  it('creates, reads, lists, renames and deletes a project', async () => {
    const a = await t.account()
    const created = await t.request({
      method: 'POST',
      url: '/platform/v2/projects',
      headers: a.platform,
      payload: { id: null, name: 'Shop', created_at: null },
    })
    expect(created.statusCode).toBe(201)
    const project = created.json<{ success: boolean; Projects: { id: string; name: string; created_at: string; links: Record<string, string>[] }[] }>()
    expect(project.success).toBe(true)
    expect(project.Projects).toHaveLength(1)
    const [p] = project.Projects
    expect(p?.id).toMatch(/^\d+$/)
    expect(p?.created_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
    expect(p?.links).toEqual([
      { self: `http://localhost:80/platform/v2/projects/${p?.id}` },
      { sites: `http://localhost:80/platform/v2/projects/${p?.id}/sites` },
    ])

    const read = await t.request({ method: 'GET', url: `/platform/v2/projects/${p?.id}`, headers: a.platform })
    expect(read.statusCode).toBe(200)
    expect(read.json()).toMatchObject({ success: true, Projects: [{ id: p?.id, name: 'Shop' }] })

    const renamed = await t.request({
      method: 'PUT',
      url: `/platform/v2/projects/${p?.id}`,
      headers: a.platform,
      payload: { id: Number(p?.id), name: 'Renamed' },
    })
    expect(renamed.statusCode).toBe(200)
    expect(renamed.json()).toMatchObject({ Projects: [{ id: p?.id, name: 'Renamed' }] })

    const list = await t.request({ method: 'GET', url: '/platform/v2/projects', headers: a.platform })
    expect(list.json<{ Projects: { name: string }[] }>().Projects.map((x) => x.name)).toEqual(['Renamed'])

    const deleted = await t.request({ method: 'DELETE', url: `/platform/v2/projects/${p?.id}`, headers: a.platform })
    expect(deleted.statusCode).toBe(200)
    expect(deleted.json()).toEqual({ success: true })
    const gone = await t.request({ method: 'GET', url: `/platform/v2/projects/${p?.id}`, headers: a.platform })
    expect(gone.statusCode).toBe(404)
    expect(gone.json()).toEqual({ success: false, message: 'The requested resource could not be found' })
  })
})

describe('project validation', () => {
  it.each([
    ['no body', undefined],
    ['no name', {}],
    ['an empty name', { name: '' }],
    ['a blank name', { name: '   ' }],
    ['a null name', { id: null, name: null, created_at: null }],
  ])('refuses a create with %s, naming the field', async (_case, body) => {
    const c = await client(t)
    expectError(await c.post('/projects', body), 400, /^name: /)
    expect(await projectNames(c)).toEqual([])
  })

  it.each([
    ['id', { id: 5, name: 'Shop' }, /^id: must be empty/],
    ['id as a string', { id: '5', name: 'Shop' }, /^id: must be empty/],
    ['created_at', { name: 'Shop', created_at: '2024-01-01 00:00:00' }, /^created_at: must be empty/],
  ])('refuses a create that sets %s', async (_case, body, message) => {
    const c = await client(t)
    expectError(await c.post('/projects', body), 400, message)
    expect(await projectNames(c)).toEqual([])
  })

  it('refuses a PUT whose id differs from the path and keeps the project as it was', async () => {
    const c = await client(t)
    const p = await createProject(c, 'Shop')
    const other = await createProject(c, 'Other')
    expectError(await c.put(`/projects/${p.id}`, { id: Number(other.id), name: 'Hijack' }), 400, /^id: must match/)
    expectError(await c.put(`/projects/${p.id}`, { name: '' }), 400, /^name: /)
    expect(await projectNames(c)).toEqual(['Shop', 'Other'])
  })

  it('treats a null name on PUT as not given', async () => {
    const c = await client(t)
    const p = await createProject(c, 'Shop')
    const response = await c.put(`/projects/${p.id}`, { id: p.id, name: null })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ success: true, Projects: [{ id: p.id, name: 'Shop' }] })
  })

  it('refuses to delete a project that still has a site, and deletes it once the site is gone', async () => {
    const c = await client(t)
    const p = await createProject(c)
    const site = await createSite(c, { title: 'Site', project_id: p.id })
    expectError(await c.del(`/projects/${p.id}`), 400, /still has sites/)
    expect((await c.get(`/projects/${p.id}`)).statusCode).toBe(200)

    expect((await c.del(`/sites/${site.id}`)).statusCode).toBe(200)
    const deleted = await c.del(`/projects/${p.id}`)
    expect(deleted.statusCode).toBe(200)
    expect(deleted.json()).toEqual({ success: true })
  })
})

describe('project lookup', () => {
  it.each(['999999', 'abc', '0', '-1', '1.5', '9223372036854775808', '99999999999999999999'])('answers 404 in the envelope for project id %s', async (id) => {
    const c = await client(t)
    await createProject(c)
    for (const response of [await c.get(`/projects/${id}`), await c.put(`/projects/${id}`, { name: 'x' }), await c.del(`/projects/${id}`)]) {
      expect(response.statusCode, response.body).toBe(404)
      expect(response.json()).toEqual(NOT_FOUND)
    }
  })

  it("answers 404 for another account's project and never shows or changes it", async () => {
    const owner = await client(t, 'Owner')
    const stranger = await client(t, 'Stranger')
    const p = await createProject(owner, 'Secret plans')

    for (const response of [
      await stranger.get(`/projects/${p.id}`),
      await stranger.put(`/projects/${p.id}`, { name: 'Taken' }),
      await stranger.del(`/projects/${p.id}`),
      await stranger.get(`/projects/${p.id}/sites`),
    ]) {
      expect(response.statusCode, response.body).toBe(404)
      expect(response.json()).toEqual(NOT_FOUND)
      expect(response.body).not.toContain('Secret plans')
    }
    expect(await projectNames(stranger)).toEqual([])
    expect(await projectNames(owner)).toEqual(['Secret plans'])
  })
})

async function projectNames(c: Client): Promise<string[]> {
  const response = await c.get('/projects')
  expect(response.statusCode).toBe(200)
  return response.json<{ Projects: ProjectJson[] }>().Projects.map((p) => p.name)
}
