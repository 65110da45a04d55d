import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/test-app.js'
import { BASE, expectError, NOT_FOUND, only, sitesOf, TIMESTAMP, type SiteJson } from '../helpers/responses.js'
import { client, createProject, createSite, createTag, listTags, readSite, type Client } from '../helpers/clients.js'

const t = useTestApp()

async function withSite(body: Record<string, unknown> = {}) {
  const c = await client(t)
  const project = await createProject(c, 'Main')
  const site = await createSite(c, { title: 'Shop DE', project_id: project.id, ...body })
  return { c, project, site }
}

const siteIds = (sites: SiteJson[]) => sites.map((s) => s.id)

describe('site create and shape', () => {
  it('creates a site through /sites and shows it with the documented shape', async () => {
    const c = await client(t)
    const p1 = await createProject(c, 'One')
    const p2 = await createProject(c, 'Two')
    const response = await c.post('/sites', { title: 'Shop DE', project_id: Number(p1.id), reference: 'erp:de-1' })
    expect(response.statusCode).toBe(201)
    const body = response.json<{ success: boolean; Sites: SiteJson[] }>()
    expect(body.success).toBe(true)
    const site = only(body.Sites)
    expect(site).toEqual({
      id: expect.stringMatching(/^\d+$/),
      title: 'Shop DE',
      project_id: p1.id,
      status: 'active',
      import_schedule: '',
      id_column: 'id',
      processing_status: 'Done',
      created_at: expect.stringMatching(TIMESTAMP),
      links: [
        { self: `${BASE}/platform/v2/sites/${site.id}` },
        { tags: `${BASE}/platform/v2/sites/${site.id}/tags` },
        { project: `${BASE}/platform/v2/projects/${p1.id}` },
      ],
      availableProjectIds: [p1.id, p2.id],
    })
    expect(await readSite(c, site.id)).toEqual(site)
    // A listing names only the site's own project (issue 10, finding 6): see site-listing.test.ts.
    expect(sitesOf(await c.get('/sites'))).toEqual([{ ...site, availableProjectIds: [p1.id] }])
  })

  it('creates a site in the project of the path, with project_id null or equal in the body', async () => {
    const c = await client(t)
    const p = await createProject(c)
    const nulls = { id: null, created_at: null, reference: null, status: null, id_column: null, import_schedule: null }
    const first = await c.post(`/projects/${p.id}/sites`, { ...nulls, title: 'A', project_id: null })
    const second = await c.post(`/projects/${p.id}/sites`, { title: 'B', project_id: p.id })
    const created = [first, second].map((r) => {
      expect(r.statusCode, r.body).toBe(201)
      return only(r.json<{ Sites: SiteJson[] }>().Sites)
    })
    expect(created.map((s) => [s.project_id, s.status, s.id_column])).toEqual([
      [p.id, 'active', 'id'],
      [p.id, 'active', 'id'],
    ])
    expect(siteIds(sitesOf(await c.get(`/projects/${p.id}/sites`)))).toEqual(siteIds(created))
  })

  it.each([
    [undefined, 'id'],
    [null, 'id'],
    ['', ''],
    ['sku', 'sku'],
  ])('stores id_column %j as %j', async (given, stored) => {
    const { c, site } = await withSite({ id_column: given })
    expect(site.id_column).toBe(stored)
    expect((await readSite(c, site.id)).id_column).toBe(stored)
  })
})

describe('site lookup by <tagName>:<tagValue>', () => {
  it('finds one site by its reference and every site carrying an ordinary tag', async () => {
    const { c, project, site: first } = await withSite({ reference: 'erp:1' })
    const second = await createSite(c, { title: 'Shop AT', project_id: project.id, reference: 'erp:2' })
    await createSite(c, { title: 'Untagged', project_id: project.id })
    await createTag(c, first.id, { key: 'brand', value: 'acme' })
    await createTag(c, second.id, { key: 'brand', value: 'acme' })

    expect(siteIds(sitesOf(await c.get('/sites/erp:1')))).toEqual([first.id])
    expect(siteIds(sitesOf(await c.get('/sites/erp:2')))).toEqual([second.id])
    expect(siteIds(sitesOf(await c.get('/sites/brand:acme')))).toEqual([first.id, second.id])
    for (const segment of ['brand:other', 'erp:3', 'erp', '999999', 'abc', '9223372036854775808']) {
      const response = await c.get(`/sites/${segment}`)
      expect(response.statusCode, segment).toBe(404)
      expect(response.json()).toEqual(NOT_FOUND)
    }
  })

  it('updates and deletes a site addressed by its reference', async () => {
    const { c, site } = await withSite({ reference: 'erp:de' })
    const updated = await c.put('/sites/erp:de', { title: 'Renamed' })
    expect(only(sitesOf(updated))).toMatchObject({ id: site.id, title: 'Renamed' })
    expect((await c.del('/sites/erp:de')).json()).toEqual({ success: true })
    expect((await c.get(`/sites/${site.id}`)).statusCode).toBe(404)
  })
})

describe('project-scoped sites', () => {
  it('lists only the sites of the project and updates only through the owning project', async () => {
    const { c, project, site } = await withSite()
    const other = await createProject(c, 'Other')
    const elsewhere = await createSite(c, { title: 'Elsewhere', project_id: other.id })

    expect(siteIds(sitesOf(await c.get(`/projects/${project.id}/sites`)))).toEqual([site.id])
    expect(siteIds(sitesOf(await c.get(`/projects/${other.id}/sites`)))).toEqual([elsewhere.id])
    expect(sitesOf(await c.get(`/projects/${other.id}/sites/${elsewhere.id}`))).toHaveLength(1)
    expect((await c.get(`/projects/${project.id}/sites/${elsewhere.id}`)).statusCode).toBe(404)

    const updated = await c.put(`/projects/${project.id}/sites/${site.id}`, { title: 'Via project' })
    expect(only(sitesOf(updated)).title).toBe('Via project')
    for (const path of [`/projects/${other.id}/sites/${site.id}`, `/projects/999999/sites/${site.id}`, `/projects/abc/sites/${site.id}`]) {
      const response = await c.put(path, { title: 'Wrong project' })
      expect(response.statusCode, path).toBe(404)
      expect(response.json()).toEqual(NOT_FOUND)
    }
    expect((await readSite(c, site.id)).title).toBe('Via project')
    expect((await c.get('/projects/999999/sites')).json()).toEqual(NOT_FOUND)
  })
})

describe('site update', () => {
  it.each([
    ['title', 'Shop Austria'],
    ['status', 'paused_upload'],
    ['status', 'disabled'],
    ['id_column', 'sku'],
    ['id_column', ''],
    ['import_schedule', 'TZ=Europe/Berlin\nH 2 * * *'],
  ])('updates %s to %j and a later read shows it', async (field, value) => {
    const { c, site } = await withSite({ import_schedule: '0 4 * * *' })
    const response = await c.put(`/sites/${site.id}`, { id: Number(site.id), [field]: value })
    const expected = { ...site, [field]: value }
    expect(only(sitesOf(response))).toEqual(expected)
    expect(await readSite(c, site.id)).toEqual(expected)
  })

  it('removes the schedule with an empty import_schedule', async () => {
    const { c, site } = await withSite({ import_schedule: 'H 3 * * *' })
    expect(only(sitesOf(await c.put(`/sites/${site.id}`, { import_schedule: '' }))).import_schedule).toBe('')
  })

  it('moves a site to another project of the account', async () => {
    const { c, project, site } = await withSite()
    const other = await createProject(c, 'Other')
    const moved = only(sitesOf(await c.put(`/sites/${site.id}`, { project_id: Number(other.id) })))
    expect(moved.project_id).toBe(other.id)
    expect(moved.links).toContainEqual({ project: `${BASE}/platform/v2/projects/${other.id}` })
    expect(sitesOf(await c.get(`/projects/${project.id}/sites`))).toEqual([])
    expect(siteIds(sitesOf(await c.get(`/projects/${other.id}/sites`)))).toEqual([site.id])
  })

  it('treats null members as not given and refuses an id that differs from the path', async () => {
    const { c, site } = await withSite({ status: 'disabled', import_schedule: 'H 1 * * *', id_column: 'sku' })
    const nulls = { id: null, title: null, project_id: null, status: null, id_column: null, import_schedule: null, created_at: null }
    expect(only(sitesOf(await c.put(`/sites/${site.id}`, nulls)))).toEqual(site)
    expectError(await c.put(`/sites/${site.id}`, { id: Number(site.id) + 1, title: 'X' }), 400, /^id: must match/)
    expect(await readSite(c, site.id)).toEqual(site)
  })
})

describe('site delete', () => {
  it('answers 200 {success:true}, then the site, its tags and its reference are gone', async () => {
    const { c, project, site } = await withSite({ reference: 'erp:1' })
    const deleted = await c.del(`/sites/${site.id}`)
    expect(deleted.statusCode).toBe(200)
    expect(deleted.json()).toEqual({ success: true })
    for (const path of [`/sites/${site.id}`, `/sites/${site.id}/tags`, '/sites/erp:1']) {
      expect((await c.get(path)).json(), path).toEqual(NOT_FOUND)
    }
    expect((await c.del(`/sites/${site.id}`)).statusCode).toBe(404)
    expect(sitesOf(await c.get('/sites'))).toEqual([])
    await createSite(c, { title: 'Again', project_id: project.id, reference: 'erp:1' })
  })
})

describe("another account's site", () => {
  it('is a 404 on every site endpoint and is never shown or changed', async () => {
    const { c: owner, project, site } = await withSite({ title: 'Secret shop', reference: 'erp:secret' })
    const tag = await createTag(owner, site.id, { key: 'brand', value: 'acme' })
    const stranger = await client(t, 'Stranger')
    const own = await createProject(stranger, 'Mine')

    const responses = [
      await stranger.get(`/sites/${site.id}`),
      await stranger.put(`/sites/${site.id}`, { title: 'Taken' }),
      await stranger.del(`/sites/${site.id}`),
      await stranger.post(`/sites/${site.id}/copy`, { site_name: 'Copy', project_id: own.id }),
      await stranger.get(`/sites/${site.id}/tags`),
      await stranger.post(`/sites/${site.id}/tags`, { key: 'k', value: 'v' }),
      await stranger.del(`/sites/${site.id}/tags/${tag.id}`),
      await stranger.get('/sites/erp:secret'),
      await stranger.put('/sites/erp:secret', { title: 'Taken' }),
      await stranger.get('/sites/brand:acme'),
      await stranger.put(`/projects/${own.id}/sites/${site.id}`, { title: 'Taken' }),
      await stranger.get(`/projects/${project.id}/sites`),
    ]
    for (const response of responses) {
      expect(response.statusCode, response.body).toBe(404)
      expect(response.json()).toEqual(NOT_FOUND)
    }
    expect(sitesOf(await stranger.get('/sites'))).toEqual([])
    expect(sitesOf(await stranger.get(`/projects/${own.id}/sites`))).toEqual([])
    await expectUnchanged(owner, site)
  })
})

async function expectUnchanged(c: Client, site: SiteJson) {
  expect(sitesOf(await c.get('/sites'))).toEqual([site])
  expect((await listTags(c, site.id)).map((tag) => `${tag.key}:${tag.value}`)).toEqual(['erp:secret', 'brand:acme'])
}
