import { describe, expect, it } from 'vitest'
import { factories } from '../helpers/factories.js'
import { useTestApp } from '../helpers/test-app.js'
import { client, createProject, createSite, createTag, listTags, type Client, type Response } from '../helpers/clients.js'
import { expectError, type SiteJson } from '../helpers/responses.js'

// Name-like texts (issue 10): at most 255 characters where nothing else is specified, and no NUL,
// which Postgres text cannot hold. Each refusal is a 400 naming the field.
const t = useTestApp()
const given = factories(t)

const long = 'x'.repeat(256)
const withNul = 'ab\u0000c'

interface Setup {
  c: Client
  site: SiteJson
  streamId: string
}

async function setup(): Promise<Setup> {
  const c = await client(t)
  const project = await createProject(c)
  const site = await createSite(c, { title: 'Shop', project_id: project.id, reference: 'erp:shop' })
  return { c, site, streamId: (await given.stream({ account: c.account })).id }
}

const channelBody = { name: 'Google', export_name: 'google' }
const sourceBody = (s: Setup) => ({ import_type: 1, status: 'active', description: 'main', stream_id: s.streamId })

// [what, request with the bad text, expected message]
const cases: [string, (s: Setup, text: string) => Promise<Response>, string][] = [
  ['project name on create', (s, text) => s.c.post('/projects', { name: text }), 'name'],
  ['project name on update', (s, text) => s.c.put(`/projects/${s.site.project_id}`, { name: text }), 'name'],
  ['site title on create', (s, text) => s.c.post('/sites', { title: text, project_id: s.site.project_id }), 'title'],
  ['site title on update', (s, text) => s.c.put(`/sites/${s.site.id}`, { title: text }), 'title'],
  ['site id_column', (s, text) => s.c.put(`/sites/${s.site.id}`, { id_column: text }), 'id_column'],
  // The whole `<tagName>:<tagValue>` counts.
  ['site reference', (s, text) => s.c.post('/sites', { title: 'T', project_id: s.site.project_id, reference: `k:${text.slice(2)}` }), 'reference'],
  ['copy site_name', (s, text) => s.c.post(`/sites/${s.site.id}/copy`, { site_name: text }), 'site_name'],
  ['tag key', (s, text) => s.c.post(`/sites/${s.site.id}/tags`, { key: text, value: 'v' }), 'key'],
  ['tag value', (s, text) => s.c.post(`/sites/${s.site.id}/tags`, { key: 'k', value: text }), 'value'],
  ['channel name', (s, text) => s.c.post(`/sites/${s.site.id}/channels`, { ...channelBody, name: text }), 'name'],
  ['channel export_name', (s, text) => s.c.post(`/sites/${s.site.id}/channels`, { ...channelBody, export_name: text }), 'export_name'],
  [
    'channel mapping column',
    (s, text) => s.c.post(`/sites/${s.site.id}/channels`, { ...channelBody, format: 'ndjson', mapping: [{ column: text, source: 'id' }] }),
    'mapping[0].column',
  ],
  [
    'destination name',
    (s, text) => s.c.post(`/sites/${s.site.id}/channels`, { ...channelBody, destinations: [{ type: 'feed', name: text }] }),
    'destinations[0].name',
  ],
  ['data source description on create', (s, text) => s.c.post(`/sites/${s.site.id}/streams`, { ...sourceBody(s), description: text }), 'description'],
  [
    'data source description on update',
    async (s, text) => {
      const created = await s.c.post(`/sites/${s.site.id}/streams`, sourceBody(s))
      expect(created.statusCode, created.body).toBe(201)
      const id = created.json<{ Sources: { id: number }[] }>().Sources[0]?.id
      return s.c.put(`/sites/${s.site.id}/streams/${id}`, { description: text })
    },
    'description',
  ],
]

const escaped = (field: string) => field.replace(/[[\]]/g, '\\$&')

describe('name-like texts', () => {
  it.each(cases)('refuses a %s of 256 characters with a 400 naming the field and the limit', async (_what, send, field) => {
    expectError(await send(await setup(), long), 400, new RegExp(`^${escaped(field)}: at most 255 characters \\(this one has 256\\)$`))
  })

  it.each(cases)('refuses a %s containing NUL with a 400 naming the field', async (_what, send, field) => {
    expectError(await send(await setup(), withNul), 400, new RegExp(`^${escaped(field)}: must not contain NUL`))
  })

  it('refuses a 10,000-character tag key with a 400, not a 500, and stores nothing', async () => {
    const { c, site } = await setup()
    expectError(await c.post(`/sites/${site.id}/tags`, { key: 'k'.repeat(10_000), value: 'v' }), 400, /^key: at most 255 characters \(this one has 10000\)$/)
    expect((await listTags(c, site.id)).map((tag) => tag.key)).toEqual(['erp'])
  })

  it('refuses a channel filename over 255 characters and a filter containing NUL', async () => {
    const { c, site } = await setup()
    const filenames = [{ type: null, filename: `${'f'.repeat(252)}.csv` }]
    expectError(await c.post(`/sites/${site.id}/channels`, { ...channelBody, filenames }), 400, /^filenames\[0\]\.filename: at most 255 characters/)
    expectError(await c.post(`/sites/${site.id}/channels`, { ...channelBody, filter: "id = '\u0000'" }), 400, /^filter: must not contain NUL/)
  })

  it('accepts 255 characters, counted as Postgres counts them (code points, not UTF-16 units)', async () => {
    const { c, site } = await setup()
    const emoji = '\u{1F600}'.repeat(255)
    expect(emoji).toHaveLength(510)
    expect((await createProject(c, emoji)).name).toBe(emoji)
    const tag = await createTag(c, site.id, { key: 'k'.repeat(255), value: emoji })
    expect([tag.key.length, tag.value]).toEqual([255, emoji])
    expectError(await c.post('/projects', { name: `${emoji}x` }), 400, /^name: at most 255 characters \(this one has 256\)$/)
  })
})
