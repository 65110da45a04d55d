import type { TestContext } from '../helpers/test-app.js'
import { client, createProject, createSite, type Client, type SiteJson } from '../platform/fixtures.js'

// Set-up shared by the scheduler tests: an account's sites with one schedule each, through HTTP.

/** A new account with `count` sites in one project, each with `importSchedule`. */
export async function accountWithSchedules(t: TestContext, count: number, importSchedule: string): Promise<{ c: Client; sites: SiteJson[] }> {
  const c = await client(t)
  const project = await createProject(c)
  const sites: SiteJson[] = []
  for (let i = 0; i < count; i++) sites.push(await createSite(c, { title: `Shop ${i}`, project_id: project.id, import_schedule: importSchedule }))
  return { c, sites }
}

/** The entries of a tick's list that belong to `sites`. */
export const of = <T extends { siteId: string }>(entries: T[], sites: SiteJson[]): T[] => entries.filter((e) => sites.some((s) => s.id === e.siteId))
