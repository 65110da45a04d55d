import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/test-app.js'
import { client, createProject, createSite, createTag, readSite, type Client } from '../helpers/clients.js'
import { expectError, sitesOf, type ProjectJson, type SiteJson } from '../helpers/responses.js'

// Listing amplification (issue 10, finding 6): every listed site used to repeat the ids of all the
// account's projects in availableProjectIds, so a listing grew with sites x projects. Listings now
// carry each site's own project; a response about one site carries every project of the account.
const t = useTestApp()

async function account(projectCount: number): Promise<{ c: Client; projects: ProjectJson[] }> {
  const c = await client(t)
  const projects: ProjectJson[] = []
  for (let i = 0; i < projectCount; i++) projects.push(await createProject(c, `Project ${i}`))
  return { c, projects }
}

async function addSites(c: Client, project: ProjectJson, count: number): Promise<SiteJson[]> {
  const sites: SiteJson[] = []
  for (let i = 0; i < count; i++) {
    const site = await createSite(c, { title: 'Shop', project_id: project.id })
    await createTag(c, site.id, { key: 'brand', value: 'acme' })
    sites.push(site)
  }
  return sites
}

const bytes = async (c: Client, path: string) => Buffer.byteLength((await c.get(path)).body)

describe('site listings at many projects', () => {
  it('grow with the number of sites, not with sites x projects', async () => {
    const few = await account(1)
    const many = await account(150)
    const [fewProject] = few.projects
    const [manyProject] = many.projects
    if (!fewProject || !manyProject) throw new Error('no project')
    await addSites(few.c, fewProject, 20)
    await addSites(many.c, manyProject, 10)
    const tenSites = await bytes(many.c, '/sites')
    await addSites(many.c, manyProject, 10)

    for (const path of ['/sites', `/projects/${manyProject.id}/sites`, '/sites/brand:acme']) {
      const withFew = await bytes(few.c, path.replace(manyProject.id, fewProject.id))
      const withMany = await bytes(many.c, path)
      // 150 projects instead of 1 leave the body about the same (ids differ in length by a few
      // characters); repeated on every site they would add ~1,500 bytes per site, 4x the body.
      expect(withMany / withFew, path).toBeLessThan(1.1)
    }
    // Twice the sites, about twice the body.
    expect((await bytes(many.c, '/sites')) / tenSites).toBeLessThan(2.1)
  })

  it("name each site's own project in a listing, and every project of the account in a response about one site", async () => {
    const { c, projects } = await account(5)
    const [first, second] = projects
    if (!first || !second) throw new Error('no project')
    const all = projects.map((p) => p.id)
    const created = await createSite(c, { title: 'Shop', project_id: second.id, reference: 'erp:one' })
    expect(created.availableProjectIds).toEqual(all)
    expect((await readSite(c, created.id)).availableProjectIds).toEqual(all)
    const updated = sitesOf(await c.put(`/sites/${created.id}`, { title: 'Renamed' }))
    expect(updated.map((s) => s.availableProjectIds)).toEqual([all])
    const copy = await c.post(`/sites/${created.id}/copy`, { site_name: 'Copy', project_id: first.id })
    expect(copy.statusCode, copy.body).toBe(201)
    expect(copy.json<{ Sites: SiteJson[] }>().Sites.map((s) => s.availableProjectIds)).toEqual([all])

    const listed = sitesOf(await c.get('/sites'))
    expect(listed.map((s) => [s.title, s.availableProjectIds])).toEqual([
      ['Renamed', [second.id]],
      ['Copy', [first.id]],
    ])
    expect(sitesOf(await c.get(`/projects/${second.id}/sites`)).map((s) => s.availableProjectIds)).toEqual([[second.id]])
    expect(sitesOf(await c.get('/sites/erp:one')).map((s) => s.availableProjectIds)).toEqual([[second.id]])
  })
})

describe('site listings at the default object and text limits', () => {
  // 5,000 sites with 255-character titles and 10,000-character schedules listed in 44 MB (six
  // listings at once: 1 GB of server memory). At the default limits a full listing stays small.
  it('stay a few MB, and a site over MAX_SITES_PER_ACCOUNT is refused', async () => {
    const c = await client(t)
    const project = await createProject(c)
    const { MAX_SITES_PER_ACCOUNT: maxSites, MAX_SCHEDULE_CHARS: maxChars, MAX_SCHEDULE_LINES: maxLines } = t.config
    expect([maxSites, maxLines, maxChars]).toEqual([2000, 50, 2000])
    // The longest title and schedule a client can save; written directly, as saving 2,000 sites would take long.
    const title = 'T'.repeat(255)
    const line = `0 6 * * ${'1,'.repeat(15)}1`
    const schedule = Array.from({ length: maxLines }, () => line).join('\n')
    expect(schedule.length).toBeGreaterThan(maxChars - line.length)
    await createSite(c, { title, project_id: project.id, import_schedule: schedule })
    await t.db
      .insertInto('site')
      .values(
        Array.from({ length: maxSites - 2 }, () => ({
          account_id: c.account.accountId,
          project_id: project.id,
          title,
          import_schedule: schedule,
          id_column: 'id',
        })),
      )
      .execute()
    await createSite(c, { title, project_id: project.id, import_schedule: schedule })
    expectError(await c.post('/sites', { title, project_id: project.id }), 400, /at most 2000 sites \(MAX_SITES_PER_ACCOUNT\)/)

    const listing = await c.get('/sites')
    expect(sitesOf(listing)).toHaveLength(maxSites)
    expect(Buffer.byteLength(listing.body)).toBeLessThan(6 * 1024 * 1024)
  })
})
