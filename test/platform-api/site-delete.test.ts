import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/test-app.js'
import { client, createChannel, createProject, createSite, readChannel, readSite } from '../helpers/clients.js'
import { feedPaths, NOT_FOUND } from '../helpers/responses.js'
import { importFixture } from '../helpers/factories.js'

// Deleting a site the way the PHP client does (below its project), and what a delete leaves on disk.
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'site-delete-'))
const t = useTestApp({ DATA_DIR: dataDir, FEED_STORAGE: 'local', RUN_POLL_SECONDS: '0.5' })
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('DELETE /platform/v2/projects/{projectId}/sites/{siteId}', () => {
  it('deletes a site of that project, and answers 404 for a site of another project or account', async () => {
    const c = await client(t)
    const project = await createProject(c, 'One')
    const other = await createProject(c, 'Two')
    const site = await createSite(c, { title: 'S', project_id: project.id })
    expect((await c.del(`/projects/${other.id}/sites/${site.id}`)).json()).toEqual(NOT_FOUND)
    const stranger = await client(t, 'Stranger')
    const strangerProject = await createProject(stranger)
    expect((await stranger.del(`/projects/${strangerProject.id}/sites/${site.id}`)).json()).toEqual(NOT_FOUND)
    expect((await readSite(c, site.id)).id).toBe(site.id)

    const deleted = await c.del(`/projects/${project.id}/sites/${site.id}`)
    expect(deleted.statusCode).toBe(200)
    expect(deleted.json()).toEqual({ success: true })
    expect((await c.get(`/sites/${site.id}`)).json()).toEqual(NOT_FOUND)
    expect((await c.del(`/projects/${project.id}/sites/${site.id}`)).json()).toEqual(NOT_FOUND)
  })
})

describe('deleting a site', () => {
  it('removes the feed files its channels served', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    await f.upload(stream, [{ id: 'a', title: 'A' }])
    const channel = await createChannel(f, { format: 'csv', filenames: [{ type: null, filename: 'feed.csv' }] })
    expect((await f.run('all')).status).toBe('success')
    const rows = await t.db.selectFrom('feed_file').select('storage_key').where('channel_id', '=', channel.id).execute()
    expect(rows).toHaveLength(1)
    const file = path.join(dataDir, 'feeds', rows[0]?.storage_key ?? '')
    const [url] = feedPaths(await readChannel(f, channel.id))
    // A full file is written for its first download after the export (a gzip download waits for it).
    expect((await t.request({ method: 'GET', url: url ?? '/feeds/x/feed.csv', headers: { 'accept-encoding': 'gzip' } })).statusCode).toBe(200)
    expect(existsSync(file)).toBe(true)

    expect((await f.platform('DELETE', `/sites/${f.site.id}`)).json()).toEqual({ success: true })
    expect(existsSync(file)).toBe(false)
    expect((await t.request({ method: 'GET', url: url ?? '/feeds/x/feed.csv' })).statusCode).toBe(404)
  })
})
