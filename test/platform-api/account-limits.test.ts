import { describe, expect, it } from 'vitest'
import { factories } from '../helpers/factories.js'
import { useTestApp } from '../helpers/test-app.js'
import { client, createProject, createSite, createTag, type Client, type Response } from '../helpers/clients.js'
import { expectError, sitesOf, type SiteJson } from '../helpers/responses.js'

// Objects per account (issue 10, docs/design.md 9): small limits through the environment, so that each
// limit is reached with a handful of requests. Every test uses accounts of its own.
const t = useTestApp({
  MAX_PROJECTS_PER_ACCOUNT: '3',
  MAX_SITES_PER_ACCOUNT: '3',
  MAX_TAGS_PER_ACCOUNT: '4',
  MAX_CHANNELS_PER_ACCOUNT: '2',
  MAX_DATA_SOURCES_PER_ACCOUNT: '2',
})
const given = factories(t)

async function withSite(body: Record<string, unknown> = {}): Promise<{ c: Client; site: SiteJson }> {
  const c = await client(t)
  const project = await createProject(c)
  return { c, site: await createSite(c, { title: 'Shop', project_id: project.id, ...body }) }
}

const channel = (c: Client, siteId: string, name = 'Google') => c.post(`/sites/${siteId}/channels`, { name, export_name: 'google' })
const dataSource = async (c: Client, siteId: string, streamId?: string) => {
  const stream_id = streamId ?? (await given.stream({ account: c.account })).id
  return c.post(`/sites/${siteId}/streams`, { import_type: 1, description: 'main', status: 'active', stream_id })
}

function created(response: Response): void {
  expect(response.statusCode, response.body).toBe(201)
}

describe('objects per account', () => {
  it('refuses a fourth project with a 400 naming MAX_PROJECTS_PER_ACCOUNT; another account is unaffected; a delete makes room', async () => {
    const c = await client(t)
    const projects = [await createProject(c, 'a'), await createProject(c, 'b'), await createProject(c, 'c')]
    expectError(await c.post('/projects', { name: 'd' }), 400, /^An account can have at most 3 projects \(MAX_PROJECTS_PER_ACCOUNT\); it has 3\./)
    await createProject(await client(t), 'elsewhere')
    expect((await c.del(`/projects/${projects[0]?.id}`)).statusCode).toBe(200)
    await createProject(c, 'd')
    expect((await c.get('/projects')).json<{ Projects: unknown[] }>().Projects).toHaveLength(3)
  })

  it('refuses a fourth site naming MAX_SITES_PER_ACCOUNT, through both create paths', async () => {
    const c = await client(t)
    const project = await createProject(c)
    for (const title of ['a', 'b', 'c']) await createSite(c, { title, project_id: project.id })
    expectError(await c.post('/sites', { title: 'd', project_id: project.id }), 400, /at most 3 sites \(MAX_SITES_PER_ACCOUNT\)/)
    expectError(await c.post(`/projects/${project.id}/sites`, { title: 'd' }), 400, /MAX_SITES_PER_ACCOUNT/)
    expect(sitesOf(await c.get('/sites'))).toHaveLength(3)
  })

  it('counts a reference as a tag: a fifth tag is refused naming MAX_TAGS_PER_ACCOUNT, and so is a site whose reference would be one', async () => {
    const { c, site } = await withSite({ reference: 'erp:1' })
    for (const value of ['a', 'b', 'c']) await createTag(c, site.id, { key: 'brand', value })
    expectError(
      await c.post(`/sites/${site.id}/tags`, { key: 'brand', value: 'd' }),
      400,
      /at most 4 site tags \(references included\) \(MAX_TAGS_PER_ACCOUNT\); it has 4/,
    )
    expectError(await c.post('/sites', { title: 'Other', project_id: site.project_id, reference: 'erp:2' }), 400, /MAX_TAGS_PER_ACCOUNT/)
    expect(sitesOf(await c.get('/sites'))).toHaveLength(1)
    // Without a reference the site needs no tag.
    await createSite(c, { title: 'Other', project_id: site.project_id })
  })

  it('refuses a third channel of the account naming MAX_CHANNELS_PER_ACCOUNT, counting every site of the account', async () => {
    const { c, site } = await withSite()
    const second = await createSite(c, { title: 'Second', project_id: site.project_id })
    created(await channel(c, site.id, 'one'))
    created(await channel(c, second.id, 'two'))
    expectError(await channel(c, second.id, 'three'), 400, /at most 2 channels \(MAX_CHANNELS_PER_ACCOUNT\); it has 2/)
    expect((await c.get(`/sites/${second.id}/channels`)).json<{ Channels: unknown[] }>().Channels).toHaveLength(1)
  })

  it('refuses a third data source of the account naming MAX_DATA_SOURCES_PER_ACCOUNT', async () => {
    const { c, site } = await withSite()
    const second = await createSite(c, { title: 'Second', project_id: site.project_id })
    const streamId = (await given.stream({ account: c.account })).id
    created(await dataSource(c, site.id, streamId))
    created(await dataSource(c, second.id, streamId))
    expectError(await dataSource(c, second.id, streamId), 400, /at most 2 data sources \(MAX_DATA_SOURCES_PER_ACCOUNT\); it has 2/)
    expect((await c.get(`/sites/${second.id}/streams`)).json<{ Sources: unknown[] }>().Sources).toHaveLength(1)
  })
})

describe('concurrent creates', () => {
  it('never overshoot a limit: of 12 parallel project creates exactly 3 succeed', async () => {
    const c = await client(t)
    const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => c.post('/projects', { name: `p${i}` })))
    expect(responses.map((r) => r.statusCode).sort()).toEqual([...Array(3).fill(201), ...Array(9).fill(400)])
    expect((await c.get('/projects')).json<{ Projects: unknown[] }>().Projects).toHaveLength(3)
  })

  it('never overshoot a limit: of 10 parallel tag creates on a site with its reference exactly 3 succeed', async () => {
    const { c, site } = await withSite({ reference: 'erp:race' })
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => c.post(`/sites/${site.id}/tags`, { key: 'k', value: `v${i}` })))
    expect(responses.filter((r) => r.statusCode === 201)).toHaveLength(3)
    expect((await c.get(`/sites/${site.id}/tags`)).json<{ Tags: unknown[] }>().Tags).toHaveLength(4)
  })
})

describe('site copy', () => {
  /** A source site with a reference, one ordinary tag, one channel and one data source. */
  async function source() {
    const { c, site } = await withSite({ reference: 'erp:src' })
    await createTag(c, site.id, { key: 'brand', value: 'acme' })
    created(await channel(c, site.id))
    created(await dataSource(c, site.id))
    return { c, site }
  }

  async function refuseCopy(c: Client, site: SiteJson, body: Record<string, unknown>, message: RegExp) {
    const before = sitesOf(await c.get('/sites'))
    expectError(await c.post(`/sites/${site.id}/copy`, { site_name: 'Copy', ...body }), 400, message)
    // Tags, channels and data sources hang on the new site: no new site, none of them either.
    expect(sitesOf(await c.get('/sites'))).toEqual(before)
  }

  it('copies while everything fits', async () => {
    const { c, site } = await source()
    created(await c.post(`/sites/${site.id}/copy`, { site_name: 'Copy', copy_export: true, copy_shared_setting: true }))
    expect(sitesOf(await c.get('/sites'))).toHaveLength(2)
  })

  it('writes nothing when the copied channels would pass MAX_CHANNELS_PER_ACCOUNT', async () => {
    const { c, site } = await source()
    created(await channel(c, site.id, 'second'))
    await refuseCopy(c, site, { copy_export: true }, /at most 2 channels \(MAX_CHANNELS_PER_ACCOUNT\); it has 2 and this would add 2/)
  })

  it('writes nothing when the copied data sources would pass MAX_DATA_SOURCES_PER_ACCOUNT', async () => {
    const { c, site } = await source()
    created(await dataSource(c, site.id))
    await refuseCopy(c, site, { copy_shared_setting: true }, /MAX_DATA_SOURCES_PER_ACCOUNT/)
  })

  it('writes nothing when the copied tags would pass MAX_TAGS_PER_ACCOUNT', async () => {
    const { c, site } = await source()
    await createTag(c, site.id, { key: 'brand', value: 'other' })
    // The reference and two ordinary tags; the copy would add the two ordinary ones.
    await refuseCopy(c, site, {}, /at most 4 site tags \(references included\) \(MAX_TAGS_PER_ACCOUNT\); it has 3 and this would add 2/)
  })

  it('writes nothing when the copy would pass MAX_SITES_PER_ACCOUNT', async () => {
    const { c, site } = await source()
    await createSite(c, { title: 'Two', project_id: site.project_id })
    await createSite(c, { title: 'Three', project_id: site.project_id })
    await refuseCopy(c, site, {}, /MAX_SITES_PER_ACCOUNT/)
  })
})
