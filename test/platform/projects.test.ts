import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/test-app.js'

const t = useTestApp()

describe('projects', () => {
  it('creates, reads, lists, renames and deletes a project', async () => {
    const a = await t.account()
    const created = await t.request({ method: 'POST', url: '/platform/v2/projects', headers: a.platform, payload: { id: null, name: 'Shop', created_at: null } })
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

    const renamed = await t.request({ method: 'PUT', url: `/platform/v2/projects/${p?.id}`, headers: a.platform, payload: { id: Number(p?.id), name: 'Renamed' } })
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
