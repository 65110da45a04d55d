import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { createChannel, createProject } from '../helpers/clients.js'

// Parallel clients changing one resource: each change reads its row locked (getChannel, getSite,
// getProject, getDataSource with forUpdate). Found by a differential run: two PUTs of one channel both
// answered 200 and one was lost, parallel DELETEs all answered 200 and were each logged, and the
// activity log's "before" of a PUT was not what it replaced.

const t = useTestApp({ ...HIGH_LIMITS, RUN_CONCURRENCY: '0', SCHEDULER_INTERVAL_SECONDS: '0', WEBHOOK_CONCURRENCY: '0' })

interface Entry {
  action: string
  target: { type: string; id: string }
  changes: Record<string, [unknown, unknown] | 'changed'>
}

async function entries(f: ImportFixture, action: string, targetId: string): Promise<Entry[]> {
  const response = await f.c.get(`/activity?action=${action}&limit=100`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ Activity: Entry[] }>().Activity.filter((entry) => entry.target.id === targetId)
}

const PARALLEL = 8

describe('parallel changes of one resource', () => {
  it('keep every field each PUT of a channel changed', async () => {
    const f = await importFixture(t)
    const channel = await createChannel(f, { name: 'N0', format: 'csv' })
    const path = `/sites/${f.site.id}/channels/${channel.id}`
    for (let round = 1; round <= 3; round++) {
      const answers = await Promise.all([f.c.put(path, { name: `N${round}` }), f.c.put(path, { filter: `price > ${round}` })])
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200])
      const read = (await f.c.get(path)).json<{ Channels: { name: string; filter: string }[] }>().Channels[0]
      expect(read, `round ${round}`).toMatchObject({ name: `N${round}`, filter: `price > ${round}` })
    }
  })

  it('log each PUT of a site with the value it replaced, so that the log chains from the first value to the last', async () => {
    const f = await importFixture(t)
    const path = `/sites/${f.site.id}`
    const before = (await f.c.get(path)).json<{ Sites: { title: string }[] }>().Sites[0]?.title
    const titles = Array.from({ length: PARALLEL }, (_, i) => `Title ${i}`)
    const answers = await Promise.all(titles.map((title) => f.c.put(path, { title })))
    expect(answers.map((answer) => answer.statusCode)).toEqual(titles.map(() => 200))
    const last = (await f.c.get(path)).json<{ Sites: { title: string }[] }>().Sites[0]?.title
    // Newest first: each entry's before is the after of the one logged before it.
    const logged = (await entries(f, 'site.updated', f.site.id)).reverse().map((entry) => entry.changes.title as [string, string])
    expect(logged).toHaveLength(PARALLEL)
    expect(logged[0]?.[0]).toBe(before)
    for (let i = 1; i < logged.length; i++) expect(logged[i]?.[0], `entry ${i}`).toBe(logged[i - 1]?.[1])
    expect(logged.at(-1)?.[1]).toBe(last)
  })

  it('delete once: one 200, a 404 for every other, one entry in the log', async () => {
    const f = await importFixture(t)
    const channel = await createChannel(f, { name: 'Gone', format: 'csv' })
    const project = await createProject(f.c, 'Empty')
    const source = String(await f.attach(await f.createStream()))
    const targets = [
      { path: `/sites/${f.site.id}/channels/${channel.id}`, action: 'channel.deleted', id: channel.id },
      { path: `/sites/${f.site.id}/streams/${source}`, action: 'data_source.deleted', id: source },
      { path: `/projects/${project.id}`, action: 'project.deleted', id: project.id },
      { path: `/sites/${f.site.id}`, action: 'site.deleted', id: f.site.id },
    ]
    for (const target of targets) {
      const answers = await Promise.all(Array.from({ length: PARALLEL }, () => f.c.send('DELETE', target.path)))
      const codes = answers.map((answer) => answer.statusCode).sort()
      expect(codes, target.path).toEqual([200, ...Array.from({ length: PARALLEL - 1 }, () => 404)])
      expect(await entries(f, target.action, target.id), target.action).toHaveLength(1)
    }
  })
})
