import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/test-app.js'
import { BASE, expectError, only, sitesOf, TIMESTAMP, type SiteJson } from '../helpers/responses.js'
import { client, createProject, createSite, createTag, listTags, readSite } from '../helpers/clients.js'

const t = useTestApp()

/** A site with a reference, a schedule and two ordinary tags (one readonly) to copy from. */
async function withSource() {
  const c = await client(t)
  const project = await createProject(c, 'Main')
  const source = await createSite(c, {
    title: 'Source',
    project_id: project.id,
    reference: 'erp:src',
    status: 'paused_upload',
    id_column: 'sku',
    import_schedule: 'TZ=Europe/Berlin\nH 3 * * *',
  })
  await createTag(c, source.id, { key: 'brand', value: 'acme' })
  await createTag(c, source.id, { key: 'team', value: 'north', readonly: 1 })
  return { c, project, source }
}

async function copied(response: Awaited<ReturnType<typeof t.request>>): Promise<SiteJson> {
  expect(response.statusCode, response.body).toBe(201)
  const body = response.json<{ success: boolean; Sites: SiteJson[] }>()
  expect(body.success).toBe(true)
  return only(body.Sites)
}

describe('site copy', () => {
  it('copies into the project of the source by default and answers 201 with Sites[1]', async () => {
    const { c, project, source } = await withSource()
    const copy = await copied(await c.post(`/sites/${source.id}/copy`, { site_name: 'Copy' }))
    expect(copy).toEqual({
      id: expect.stringMatching(/^\d+$/),
      title: 'Copy',
      project_id: project.id,
      status: 'paused_upload',
      id_column: 'sku',
      import_schedule: '',
      processing_status: 'Done',
      created_at: expect.stringMatching(TIMESTAMP),
      links: [
        { self: `${BASE}/platform/v2/sites/${copy.id}` },
        { tags: `${BASE}/platform/v2/sites/${copy.id}/tags` },
        { project: `${BASE}/platform/v2/projects/${project.id}` },
      ],
      availableProjectIds: [project.id],
    })
    expect(copy.id).not.toBe(source.id)
    expect(await readSite(c, copy.id)).toEqual(copy)
    expect(await readSite(c, source.id)).toEqual(source)
  })

  it('copies the tags except the reference', async () => {
    const { c, source } = await withSource()
    const copy = await copied(await c.post(`/sites/${source.id}/copy`, { site_name: 'Copy' }))
    const tags = (await listTags(c, copy.id)).map((tag) => [tag.key, tag.value, tag.readonly])
    expect(tags).toEqual([
      ['brand', 'acme', '0'],
      ['team', 'north', '1'],
    ])
    expect(sitesOf(await c.get('/sites/erp:src')).map((s) => s.id)).toEqual([source.id])
    expect(sitesOf(await c.get('/sites/brand:acme')).map((s) => s.id)).toEqual([source.id, copy.id])
    expect(await listTags(c, source.id)).toHaveLength(3)
  })

  it.each([
    [undefined, ''],
    [null, ''],
    [false, ''],
    [true, 'TZ=Europe/Berlin\nH 3 * * *'],
  ])('with copy_schedule_and_trigger %j gives the copy the schedule %j', async (flag, schedule) => {
    const { c, source } = await withSource()
    const copy = await copied(await c.post(`/sites/${source.id}/copy`, { site_name: 'Copy', copy_schedule_and_trigger: flag }))
    expect(copy.import_schedule).toBe(schedule)
    expect((await readSite(c, copy.id)).import_schedule).toBe(schedule)
  })

  it('copies into another project of the account, addressing the source by its reference', async () => {
    const { c, project, source } = await withSource()
    const other = await createProject(c, 'Other')
    const copy = await copied(await c.post('/sites/erp:src/copy', { site_name: 'Elsewhere', project_id: other.id }))
    expect(copy.project_id).toBe(other.id)
    expect(copy.availableProjectIds).toEqual([project.id, other.id])
    expect(sitesOf(await c.get(`/projects/${other.id}/sites`)).map((s) => s.id)).toEqual([copy.id])
    expect(sitesOf(await c.get(`/projects/${project.id}/sites`)).map((s) => s.id)).toEqual([source.id])
  })

  it.each([
    ['missing', {}],
    ['null', { site_name: null }],
    ['empty', { site_name: '' }],
    ['blank', { site_name: '   ' }],
  ])('refuses a %s site_name', async (_case, body) => {
    const { c, source } = await withSource()
    expectError(await c.post(`/sites/${source.id}/copy`, body), 400, /^site_name: is required/)
    expect(sitesOf(await c.get('/sites'))).toHaveLength(1)
  })

  it("refuses a project_id that is not one of the account's projects", async () => {
    const { c, source } = await withSource()
    const foreign = await createProject(await client(t, 'Other'), 'Foreign')
    const cases: [unknown, RegExp][] = [
      [foreign.id, /^project_id: no project \d+ in this account/],
      [999999, /^project_id: no project 999999 in this account/],
      ['abc', /^project_id: must be a positive integer/],
    ]
    for (const [projectId, message] of cases) {
      expectError(await c.post(`/sites/${source.id}/copy`, { site_name: 'Copy', project_id: projectId }), 400, message)
    }
    expect(sitesOf(await c.get('/sites'))).toHaveLength(1)
  })

  it('answers 404 for a site that does not exist', async () => {
    const { c } = await withSource()
    expectError(await c.post('/sites/999999/copy', { site_name: 'Copy' }), 404, 'The requested resource could not be found')
    expectError(await c.post('/sites/erp:none/copy', { site_name: 'Copy' }), 404)
  })
})
