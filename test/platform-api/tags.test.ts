import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/test-app.js'
import { expectError, NOT_FOUND, only, type TagJson } from '../helpers/responses.js'
import { client, createProject, createSite, createTag, listTags, type Client } from '../helpers/clients.js'

const t = useTestApp()

async function withSite(reference?: string) {
  const c = await client(t)
  const project = await createProject(c)
  const site = await createSite(c, { title: 'Shop', project_id: project.id, reference: reference ?? null })
  return { c, project, site }
}

const pairs = (tags: TagJson[]) => tags.map((tag) => `${tag.key}:${tag.value}`)

describe('site tags', () => {
  it('lists, creates and deletes tags', async () => {
    const { c, site } = await withSite()
    expect(await listTags(c, site.id)).toEqual([])

    const response = await c.post(`/sites/${site.id}/tags`, { site_id: site.id, key: 'brand', value: 'acme' })
    expect(response.statusCode).toBe(201)
    const body = response.json<{ success: boolean; Tags: TagJson[] }>()
    expect(body.success).toBe(true)
    const tag = only(body.Tags)
    expect(tag).toEqual({ id: expect.stringMatching(/^\d+$/), key: 'brand', value: 'acme', readonly: '0' })
    const second = await createTag(c, site.id, { key: 'brand', value: 'other' })
    expect(await listTags(c, site.id)).toEqual([tag, second])

    const deleted = await c.del(`/sites/${site.id}/tags/${tag.id}`)
    expect(deleted.statusCode).toBe(200)
    expect(deleted.json()).toEqual({ success: true })
    expect(await listTags(c, site.id)).toEqual([second])
    expect((await c.del(`/sites/${site.id}/tags/${tag.id}`)).json()).toEqual(NOT_FOUND)
  })

  it.each([
    [0, '0'],
    [1, '1'],
    ['0', '0'],
    ['1', '1'],
    [null, '0'],
    [undefined, '0'],
  ])('stores readonly %j and shows it as %j', async (readonly, shown) => {
    const { c, site } = await withSite()
    const tag = await createTag(c, site.id, { key: 'k', value: 'v', readonly })
    expect(tag.readonly).toBe(shown)
    expect(await listTags(c, site.id)).toEqual([tag])
  })

  it.each([2, -1, 'yes'])('refuses readonly %j', async (readonly) => {
    const { c, site } = await withSite()
    expectError(await c.post(`/sites/${site.id}/tags`, { key: 'k', value: 'v', readonly }), 400, /^readonly: /)
    expect(await listTags(c, site.id)).toEqual([])
  })

  it('refuses to delete a readonly tag', async () => {
    const { c, site } = await withSite()
    const tag = await createTag(c, site.id, { key: 'k', value: 'v', readonly: 1 })
    expectError(await c.del(`/sites/${site.id}/tags/${tag.id}`), 400, /readonly/)
    expect(await listTags(c, site.id)).toEqual([tag])
  })

  it('shows the reference as a readonly tag that cannot be deleted', async () => {
    const { c, site } = await withSite('erp:de-1')
    const reference = only(await listTags(c, site.id))
    expect(reference).toEqual({ id: expect.stringMatching(/^\d+$/), key: 'erp', value: 'de-1', readonly: '1' })
    expectError(await c.del(`/sites/${site.id}/tags/${reference.id}`), 400, /readonly/)
    expect(await listTags(c, 'erp:de-1')).toEqual([reference])
  })

  it.each([
    [{ value: 'v' }, /^key: is required/],
    [{ key: null, value: 'v' }, /^key: is required/],
    [{ key: '', value: 'v' }, /^key: is required/],
    [{ key: 'k' }, /^value: is required/],
    [{ key: 'k', value: null }, /^value: is required/],
    [{ key: 'k', value: ' ' }, /^value: is required/],
  ])('refuses %j, naming the missing field', async (body, message) => {
    const { c, site } = await withSite()
    expectError(await c.post(`/sites/${site.id}/tags`, body), 400, message)
    expect(await listTags(c, site.id)).toEqual([])
  })

  it('refuses a site_id that differs from the site in the path and accepts a matching one', async () => {
    const { c, project, site } = await withSite()
    const other = await createSite(c, { title: 'Other', project_id: project.id })
    expectError(await c.post(`/sites/${site.id}/tags`, { site_id: other.id, key: 'k', value: 'v' }), 400, /^site_id: must match/)
    expect(await listTags(c, site.id)).toEqual([])
    expect(await listTags(c, other.id)).toEqual([])
    await createTag(c, site.id, { site_id: Number(site.id), key: 'k', value: 'v' })
  })

  it('refuses a duplicate tag on the same site with 409, and allows the same tag on another site', async () => {
    const { c, project, site } = await withSite()
    await createTag(c, site.id, { key: 'brand', value: 'acme' })
    expectError(await c.post(`/sites/${site.id}/tags`, { key: 'brand', value: 'acme' }), 409, /brand:acme/)
    expect(pairs(await listTags(c, site.id))).toEqual(['brand:acme'])
    const other = await createSite(c, { title: 'Other', project_id: project.id })
    await createTag(c, other.id, { key: 'brand', value: 'acme' })
  })

  it('answers 404 for an unknown tag, or a tag addressed through another site', async () => {
    const { c, project, site } = await withSite()
    const other = await createSite(c, { title: 'Other', project_id: project.id })
    const tag = await createTag(c, other.id, { key: 'k', value: 'v' })
    for (const tagId of ['999999', 'abc', '0', '9223372036854775808', tag.id]) {
      expect((await c.del(`/sites/${site.id}/tags/${tagId}`)).json(), tagId).toEqual(NOT_FOUND)
    }
    expect(await listTags(c, other.id)).toEqual([tag])
    for (const response of [await c.get('/sites/999999/tags'), await c.post('/sites/999999/tags', { key: 'k', value: 'v' })]) {
      expect(response.statusCode).toBe(404)
      expect(response.json()).toEqual(NOT_FOUND)
    }
  })

  it("answers 404 for another account's site and tag and leaves them alone", async () => {
    const { c: owner, site } = await withSite('erp:secret')
    const tag = await createTag(owner, site.id, { key: 'brand', value: 'secret-brand' })
    const { c: stranger, site: ownSite } = await withSite()
    const attempts = [
      await stranger.get(`/sites/${site.id}/tags`),
      await stranger.get('/sites/erp:secret/tags'),
      await stranger.post(`/sites/${site.id}/tags`, { key: 'k', value: 'v' }),
      await stranger.del(`/sites/${site.id}/tags/${tag.id}`),
      await stranger.del(`/sites/${ownSite.id}/tags/${tag.id}`),
    ]
    for (const response of attempts) {
      expect(response.statusCode, response.body).toBe(404)
      expect(response.json()).toEqual(NOT_FOUND)
      expect(response.body).not.toContain('secret-brand')
    }
    expect(pairs(await listTags(owner, site.id))).toEqual(['erp:secret', 'brand:secret-brand'])
    await expectNoTags(stranger, ownSite.id)
  })
})

async function expectNoTags(c: Client, siteId: string) {
  expect(await listTags(c, siteId)).toEqual([])
}
