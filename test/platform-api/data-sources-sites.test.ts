import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { createSite, createSource, listSources, NDJSON, sourceBody } from '../helpers/clients.js'
import { expectApiError, expectBatch, expectError, NOT_FOUND, only, type SiteJson, type SourceJson } from '../helpers/responses.js'
import { factories, sourcesFixture, type SourcesFixture } from '../helpers/factories.js'

const t = useTestApp(HIGH_LIMITS)
const given = factories(t)

// How data sources follow their site: copied with copy_shared_setting, removed with the site, and
// a disabled site blocking uploads to the streams that feed it.

/** What a copied data source must keep: everything but its own id and site. */
function flow(source: SourceJson) {
  return {
    stream_id: source.stream_id,
    settings: source.settings,
    import_type: source.import_type,
    description: source.description,
    status: source.status,
    import_empty: source.import_empty,
    source: source.source,
  }
}

/** A site with two data sources on two streams: a main feed and a paused additional one. */
async function withSources(): Promise<{ f: SourcesFixture; sources: SourceJson[] }> {
  const f = await sourcesFixture(t)
  const second = (await given.stream({ account: f.account })).id
  const sources = [
    await createSource(f, sourceBody(f.streamId, { description: 'Main', import_type: 1 })),
    await createSource(f, sourceBody(second, { description: 'Extra', import_type: 2, status: 'paused', import_empty: true })),
  ]
  return { f, sources }
}

async function copySite(f: SourcesFixture, body: Record<string, unknown>): Promise<SiteJson> {
  const response = await f.c.post(`/sites/${f.site.id}/copy`, { site_name: 'Copy', ...body })
  expect(response.statusCode, response.body).toBe(201)
  return only(response.json<{ Sites: SiteJson[] }>().Sites)
}

async function setSiteStatus(f: SourcesFixture, siteId: string, status: string): Promise<void> {
  const response = await f.c.put(`/sites/${siteId}`, { status })
  expect(response.statusCode, response.body).toBe(200)
  expect(only(response.json<{ Sites: SiteJson[] }>().Sites).status).toBe(status)
}

let row = 0
function upload(f: SourcesFixture, streamId: string) {
  return t.request({ method: 'POST', url: `/streams/${streamId}/products`, headers: { ...f.account.bearer, ...NDJSON }, payload: `{"id":"${++row}"}\n` })
}

describe('site copy', () => {
  it('with copy_shared_setting true copies the data sources to the copy', async () => {
    const { f, sources } = await withSources()
    const copy = await copySite(f, { copy_shared_setting: true })
    const copied = await listSources(f, copy.id)
    expect(copied.map(flow)).toEqual(sources.map(flow))
    expect(copied.map((s) => s.stream_id)).toEqual(sources.map((s) => s.stream_id))
    expect(copied.map((s) => s.import_type)).toEqual([1, 2])
    for (const source of copied) {
      expect(source.site_id).toBe(Number(copy.id))
      expect(sources.map((s) => s.id)).not.toContain(source.id)
    }
    expect(new Set(copied.map((s) => s.id)).size).toBe(2)
    // The copies are sources of their own: changing one leaves the original alone.
    const [first] = copied
    if (!first) throw new Error('expected copied sources')
    expect((await f.c.put(`/sites/${copy.id}/streams/${first.id}`, { description: 'Changed' })).statusCode).toBe(200)
    expect(await listSources(f)).toEqual(sources)
  })

  it.each([
    ['left out', {}],
    ['null', { copy_shared_setting: null }],
    ['false', { copy_shared_setting: false }],
  ])('with copy_shared_setting %s copies no data source', async (_case, body) => {
    const { f, sources } = await withSources()
    const copy = await copySite(f, body)
    expect(await listSources(f, copy.id)).toEqual([])
    expect(await listSources(f)).toEqual(sources)
  })
})

describe('site deletion', () => {
  it("removes the site's data sources and leaves other sites' sources on the same stream", async () => {
    const { f, sources } = await withSources()
    const [main] = sources
    if (!main) throw new Error('expected sources')
    const other = await createSite(f.c, { title: 'Other', project_id: f.site.project_id })
    const kept = await createSource(f, sourceBody(f.streamId), other.id)
    expect((await f.c.del(`/sites/${f.site.id}`)).statusCode).toBe(200)

    expect((await f.c.get(`/sites/${f.site.id}/streams`)).json()).toEqual(NOT_FOUND)
    expectError(await f.c.get(`/sites/${f.site.id}/streams/${main.id}`), 404)
    expectError(await f.c.get('/sites/erp:shop/streams'), 404)
    // A new site under the old reference starts without data sources.
    const again = await createSite(f.c, { title: 'Again', project_id: f.site.project_id, reference: 'erp:shop' })
    expect(again.id).not.toBe(f.site.id)
    expect(await listSources(f, 'erp:shop')).toEqual([])
    expectError(await f.c.get(`/sites/${again.id}/streams/${main.id}`), 404)
    expect(await listSources(f, other.id)).toEqual([kept])
  })
})

describe('uploads to a stream that feeds a disabled site', () => {
  it('are refused with 403 while the site is disabled and accepted again once it is active', async () => {
    const f = await sourcesFixture(t)
    await createSource(f)
    expectBatch(await upload(f, f.streamId))

    await setSiteStatus(f, f.site.id, 'disabled')
    const refused = expectApiError(await upload(f, f.streamId), 403, /disabled site/)
    expect(refused.title).toBe('Forbidden')
    expect(refused.detail).toContain(f.streamId)

    await setSiteStatus(f, f.site.id, 'paused_upload')
    expectBatch(await upload(f, f.streamId))
    await setSiteStatus(f, f.site.id, 'disabled')
    expectApiError(await upload(f, f.streamId), 403)
    await setSiteStatus(f, f.site.id, 'active')
    const batch = expectBatch(await upload(f, f.streamId))
    expect(batch.attributes.status).toBe('uploaded')
    expect(batch.relationships.stream.data).toEqual({ type: 'stream', id: f.streamId })
  })

  it('block a stream that feeds any disabled site, and only the streams that do', async () => {
    const f = await sourcesFixture(t)
    const unrelated = (await given.stream({ account: f.account })).id
    const other = await createSite(f.c, { title: 'Other', project_id: f.site.project_id, status: 'disabled' })
    await createSource(f)
    const blocking = await createSource(f, sourceBody(f.streamId), other.id)
    expectApiError(await upload(f, f.streamId), 403, /disabled site/)
    expectBatch(await upload(f, unrelated))

    // Removing the data source of the disabled site unblocks the stream.
    expect((await f.c.del(`/sites/${other.id}/streams/${blocking.id}`)).statusCode).toBe(200)
    expectBatch(await upload(f, f.streamId))

    // So does deleting the disabled site together with its data sources.
    await createSource(f, sourceBody(f.streamId), other.id)
    expectApiError(await upload(f, f.streamId), 403)
    expect((await f.c.del(`/sites/${other.id}`)).statusCode).toBe(200)
    expectBatch(await upload(f, f.streamId))
  })

  it("are not blocked by another account's disabled site", async () => {
    const f = await sourcesFixture(t)
    await createSource(f)
    const other = await sourcesFixture(t, 'Other', 'Other account')
    await createSource(other)
    await setSiteStatus(other, other.site.id, 'disabled')
    expectApiError(await upload(other, other.streamId), 403)
    expectBatch(await upload(f, f.streamId))
  })
})
