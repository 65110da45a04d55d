import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/test-app.js'
import { expectError, NOT_FOUND, only, type TagJson } from '../helpers/responses.js'
import { client, createProject, createSite, createTag, listTags, readSite } from '../helpers/clients.js'

// Tags::update of the official PHP client: PUT /platform/v2/sites/{siteId}/tags/{tagId} with the
// tag's fields, answered with the Tags envelope.
const t = useTestApp()

async function siteWithTag(reference: string | null = null) {
  const c = await client(t)
  const project = await createProject(c)
  const site = await createSite(c, { title: 'Shop', project_id: project.id, reference })
  const tag = await createTag(c, site.id, { key: 'country', value: 'de' })
  return { c, site, tag }
}

describe('PUT /platform/v2/sites/{siteId}/tags/{tagId}', () => {
  it('changes key, value and readonly and answers with the Tags envelope', async () => {
    const { c, site, tag } = await siteWithTag()
    const response = await c.put(`/sites/${site.id}/tags/${tag.id}`, { id: tag.id, site_id: site.id, key: 'market', value: 'at', readonly: '0' })
    expect(response.statusCode, response.body).toBe(200)
    const body = response.json<{ success: boolean; Tags: TagJson[] }>()
    expect(body).toEqual({ success: true, Tags: [{ id: tag.id, key: 'market', value: 'at', readonly: '0' }] })
    expect(await listTags(c, site.id)).toEqual(body.Tags)
    // The site is found by the tag's new value, no longer by the old one.
    expect((await readSite(c, 'market:at')).id).toBe(site.id)
    expect((await c.get('/sites/country:de')).json()).toEqual(NOT_FOUND)
  })

  it('keeps the fields a body leaves out or sends as null, as the PHP client sends them', async () => {
    const { c, site, tag } = await siteWithTag()
    const response = await c.put(`/sites/${site.id}/tags/${tag.id}`, { id: null, site_id: null, key: null, value: 'fr', readonly: null })
    expect(response.statusCode, response.body).toBe(200)
    expect(only(response.json<{ Tags: TagJson[] }>().Tags)).toEqual({ ...tag, value: 'fr' })
    // Through the site's tag path segment, and with a numeric site id in the body.
    const byTag = await c.put(`/sites/country:fr/tags/${tag.id}`, { site_id: Number(site.id), readonly: 1 })
    expect(only(byTag.json<{ Tags: TagJson[] }>().Tags)).toEqual({ ...tag, value: 'fr', readonly: '1' })
  })

  it('refuses to change a readonly tag or the site reference with a 400, and changes nothing', async () => {
    const { c, site } = await siteWithTag('shop:de')
    const readonly = await createTag(c, site.id, { key: 'erp', value: '42', readonly: 1 })
    expectError(await c.put(`/sites/${site.id}/tags/${readonly.id}`, { value: '43' }), 400, `Tag ${readonly.id} is readonly and cannot be changed`)
    expectError(await c.put(`/sites/${site.id}/tags/${readonly.id}`, { readonly: 0 }), 400, /readonly/)
    const reference = (await listTags(c, site.id)).find((tag) => tag.key === 'shop')
    expect(reference).toBeDefined()
    expectError(await c.put(`/sites/${site.id}/tags/${reference?.id}`, { value: 'at' }), 400, /reference and cannot be changed/)
    expect((await readSite(c, 'shop:de')).id).toBe(site.id)
    expect((await listTags(c, site.id)).find((tag) => tag.id === readonly.id)).toEqual(readonly)
  })

  it('names the field of a bad value, and answers 409 for a tag the site already has', async () => {
    const { c, site, tag } = await siteWithTag()
    await createTag(c, site.id, { key: 'brand', value: 'acme' })
    const put = (body: object) => c.put(`/sites/${site.id}/tags/${tag.id}`, body)
    expectError(await put({ key: '' }), 400, /^key: /)
    expectError(await put({ key: 'a:b' }), 400, /^key: must not contain ":"/)
    expectError(await put({ value: 'x'.repeat(256) }), 400, /^value: at most 255 characters/)
    expectError(await put({ value: 'a\u0000b' }), 400, /^value: must not contain NUL/)
    expectError(await put({ readonly: 'yes' }), 400, /^readonly: /)
    expectError(await put({ id: '999999' }), 400, /^id: must match the tag in the path/)
    expectError(await put({ site_id: '999999' }), 400, /^site_id: must match the site in the path/)
    expectError(await put({ key: 'brand', value: 'acme' }), 409, /already has the tag brand:acme/)
    expect((await listTags(c, site.id)).find((found) => found.id === tag.id)).toEqual(tag)
  })

  it('answers 404 for a tag of another site or account, and for a tag id that is no number', async () => {
    const { c, site, tag } = await siteWithTag()
    const other = await createSite(c, { title: 'Other', project_id: site.project_id })
    expect((await c.put(`/sites/${other.id}/tags/${tag.id}`, { value: 'x' })).json()).toEqual(NOT_FOUND)
    expect((await c.put(`/sites/${site.id}/tags/abc`, { value: 'x' })).json()).toEqual(NOT_FOUND)
    expect((await c.put(`/sites/${site.id}/tags/99999999999999999999`, { value: 'x' })).statusCode).toBe(404)
    const stranger = await client(t, 'Stranger')
    const foreign = await stranger.put(`/sites/${site.id}/tags/${tag.id}`, { value: 'x' })
    expect(foreign.statusCode).toBe(404)
    expect(foreign.json()).toEqual(NOT_FOUND)
    expect((await listTags(c, site.id)).find((found) => found.id === tag.id)).toEqual(tag)
  })

  it('serves the tag without its site in the path, as the PHP client does when no site is set', async () => {
    const { c, site, tag } = await siteWithTag()
    const created = await c.post('/tags', { site_id: site.id, key: 'brand', value: 'acme' })
    expect(created.statusCode, created.body).toBe(201)
    const brand = only(created.json<{ Tags: TagJson[] }>().Tags)
    expect(brand).toEqual({ id: expect.stringMatching(/^\d+$/), key: 'brand', value: 'acme', readonly: '0' })
    expectError(await c.post('/tags', { key: 'no', value: 'site' }), 400, /^site_id: is required/)
    expect((await c.get(`/tags/${tag.id}`)).json()).toEqual({ success: true, Tags: [tag] })
    const updated = await c.put(`/tags/${tag.id}`, { id: tag.id, site_id: null, key: 'country', value: 'ch', readonly: null })
    expect(updated.json()).toEqual({ success: true, Tags: [{ ...tag, value: 'ch' }] })
    expect((await c.get(`/sites/${site.id}/tags/${tag.id}`)).json()).toEqual({ success: true, Tags: [{ ...tag, value: 'ch' }] })
    expect((await c.del(`/tags/${brand.id}`)).json()).toEqual({ success: true })
    expect(await listTags(c, site.id)).toEqual([{ ...tag, value: 'ch' }])
    const stranger = await client(t, 'Stranger')
    expect((await stranger.put(`/tags/${tag.id}`, { value: 'x' })).json()).toEqual(NOT_FOUND)
    expect((await stranger.del(`/tags/${tag.id}`)).json()).toEqual(NOT_FOUND)
    expect((await stranger.post('/tags', { site_id: site.id, key: 'k', value: 'v' })).json()).toEqual(NOT_FOUND)
  })

  it('answers a body that changes nothing with the tag as it is, and takes site_id as a reference too', async () => {
    const { c, site, tag } = await siteWithTag('shop:ch')
    for (const body of [{}, { id: tag.id }, { site_id: site.id, id: Number(tag.id), key: null, value: null, readonly: null }]) {
      const response = await c.put(`/sites/${site.id}/tags/${tag.id}`, body)
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json()).toEqual({ success: true, Tags: [tag] })
    }
    expect((await t.request({ method: 'PUT', url: `/platform/v2/tags/${tag.id}`, headers: c.account.platform })).json()).toEqual({ success: true, Tags: [tag] })
    expect((await c.put(`/tags/${tag.id}`, { site_id: 'shop:ch', value: 'li' })).json()).toEqual({ success: true, Tags: [{ ...tag, value: 'li' }] })
    expect((await c.post('/sites/shop:ch/tags', { site_id: 'shop:ch', key: 'k', value: 'v' })).statusCode).toBe(201)
    expect((await c.post('/tags', { site_id: 'shop:ch', key: 'k2', value: 'v' })).statusCode).toBe(201)
    expectError(await c.put(`/tags/${tag.id}`, { site_id: '999999', value: 'x' }), 400, "site_id: must match the tag's site")
  })
})
