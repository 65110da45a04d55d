import { beforeAll, describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { createSite, createSource, CREDENTIALS, sourceBody } from '../helpers/clients.js'
import { factories, sourcesFixture, type SourcesFixture } from '../helpers/factories.js'
import { expectError, sourcesOf, type CursorJson, type SourceJson } from '../helpers/responses.js'

const t = useTestApp(HIGH_LIMITS)
const given = factories(t)

// Cursor paging of GET /platform/v2/sites/{siteId}/streams (docs/interface.md "Platform: site stream data
// sources"): `cursor` returns the sources whose ids come after it, `meta.cursor.next` starts the next
// page (0 on the last one), `previous` goes back, `limit` is 1 to 1000 (default 100).

interface Page {
  ids: number[]
  cursor: CursorJson
}

/** Five sources on the site, created alternately with sources of a second site so ids have gaps. */
let f: SourcesFixture
let ids: number[]
let neighbourIds: number[]

beforeAll(async () => {
  f = await sourcesFixture(t, 'Paged')
  // A second site of the same account.
  const neighbour = await createSite(f.c, { title: 'Neighbour', project_id: f.site.project_id })
  const secondStream = (await given.stream({ account: f.account })).id
  ids = []
  neighbourIds = []
  for (let i = 1; i <= 5; i++) {
    ids.push((await createSource(f, sourceBody(i % 2 === 0 ? secondStream : f.streamId, { description: `Feed ${i}`, import_type: i % 2 === 0 ? 2 : 1 }))).id)
    if (i < 4) neighbourIds.push((await createSource(f, sourceBody(f.streamId, { description: `Other ${i}` }), neighbour.id)).id)
  }
})

async function page(query: string, segment = f.site.id): Promise<Page> {
  const body = sourcesOf(await f.send('GET', `/sites/${segment}/streams${query}`))
  expect(body.meta.cursor.count).toBe(body.Sources.length)
  for (const source of body.Sources) expect(source.site_id).toBe(Number(f.site.id))
  return { ids: body.Sources.map((s) => s.id), cursor: body.meta.cursor }
}

describe('listing data sources', () => {
  it('answers every source of the site in id order when no paging is asked for', async () => {
    const body = sourcesOf(await f.send('GET', `/sites/${f.site.id}/streams`))
    expect(body.Sources.map((s: SourceJson) => s.description)).toEqual(['Feed 1', 'Feed 2', 'Feed 3', 'Feed 4', 'Feed 5'])
    expect(body.Sources.map((s) => s.id)).toEqual(ids)
    expect(body.meta).toEqual({ cursor: { current: 0, prev: 0, next: 0, count: 5 } })
    expect([...ids].sort((a, b) => a - b)).toEqual(ids)
    for (const id of neighbourIds) expect(ids).not.toContain(id)
    expect(Math.min(...neighbourIds)).toBeLessThan(Math.max(...ids))
  })

  it.each(CREDENTIALS)('walks forward with limit and meta.cursor.next until next is 0 (%s)', async (credential) => {
    const pages: Page[] = []
    let cursor = 0
    for (let guard = 0; guard < 10; guard++) {
      const body = sourcesOf(await f.send('GET', `/sites/${f.site.id}/streams?limit=2&cursor=${cursor}`, undefined, credential))
      pages.push({ ids: body.Sources.map((s) => s.id), cursor: body.meta.cursor })
      cursor = body.meta.cursor.next
      if (cursor === 0) break
    }
    const [a1, a2, a3, a4, a5] = ids as [number, number, number, number, number]
    expect(pages).toEqual([
      { ids: [a1, a2], cursor: { current: 0, prev: 0, next: a2, count: 2 } },
      { ids: [a3, a4], cursor: { current: a2, prev: a3, next: a4, count: 2 } },
      { ids: [a5], cursor: { current: a4, prev: a5, next: 0, count: 1 } },
    ])
  })

  it('returns the sources whose ids come after the cursor, whatever id the cursor names', async () => {
    const [a1, a2, a3, a4, a5] = ids as [number, number, number, number, number]
    expect((await page(`?cursor=${a3}`)).ids).toEqual([a4, a5])
    expect((await page(`?cursor=${a1}&limit=1`)).ids).toEqual([a2])
    // A cursor that is an id of another site's source still counts as a position.
    const between = neighbourIds.find((id) => id > a1 && id < a4)
    expect(between).toBeDefined()
    expect((await page(`?cursor=${between}`)).ids).toEqual(ids.filter((id) => id > (between ?? 0)))
    expect(await page(`?cursor=${a5}`)).toEqual({ ids: [], cursor: { current: a5, prev: 0, next: 0, count: 0 } })
    expect((await page('?cursor=999999999')).ids).toEqual([])
  })

  it('gives no next cursor when the last page is exactly full', async () => {
    const [, , , a4, a5] = ids as [number, number, number, number, number]
    expect((await page('?limit=5')).cursor).toEqual({ current: 0, prev: 0, next: 0, count: 5 })
    expect((await page('?limit=4')).cursor.next).toBe(a4)
    expect((await page(`?limit=4&cursor=${a4}`)).ids).toEqual([a5])
    expect((await page('?limit=1000')).ids).toEqual(ids)
  })

  it('goes back with previous: meta.cursor.prev of a page returns the page before it', async () => {
    const [a1, a2, a3, a4, a5] = ids as [number, number, number, number, number]
    const last = await page(`?limit=2&cursor=${a4}`)
    expect(last.ids).toEqual([a5])
    const middle = await page(`?limit=2&previous=${last.cursor.prev}`)
    expect(middle.ids).toEqual([a3, a4])
    expect(middle.cursor.prev).toBe(a3)
    expect(middle.cursor.next).toBe(a4)
    // current is the cursor that returns the page, whichever way it was reached.
    expect(middle.cursor.current).toBe(a2)
    expect((await page(`?limit=2&cursor=${a2}`)).cursor.current).toBe(a2)
    const first = await page(`?limit=2&previous=${middle.cursor.prev}`)
    expect(first.ids).toEqual([a1, a2])
    expect(first.cursor.prev).toBe(0)
    expect(first.cursor.next).toBe(a2)
    // From the first page back there is nothing.
    expect((await page(`?limit=2&previous=${a1}`)).ids).toEqual([])
    // next of a page reached by going back continues forward again.
    expect((await page(`?limit=2&cursor=${first.cursor.next}`)).ids).toEqual([a3, a4])
  })

  it.each([
    ['limit=0', /^limit: must be >= 1/],
    ['limit=1001', /^limit: must be <= 1000/],
    ['limit=abc', /^limit: /],
    ['cursor=-1', /^cursor: must be >= 0/],
    ['cursor=1.5', /^cursor: /],
    ['previous=-1', /^previous: must be >= 0/],
  ])('answers 400 naming the parameter to %s', async (query, message) => {
    expectError(await f.send('GET', `/sites/${f.site.id}/streams?${query}`), 400, message)
    expectError(await f.send('GET', `/sites/${f.site.id}/streams?${query}`, undefined, 'bearer'), 400, message)
  })

  it('answers an empty page for a site without sources', async () => {
    const empty = await sourcesFixture(t, 'Empty')
    const body = sourcesOf(await empty.send('GET', `/sites/${empty.site.id}/streams`))
    expect(body).toEqual({ success: true, Sources: [], meta: { cursor: { current: 0, prev: 0, next: 0, count: 0 } } })
  })

  it('pages 100 sources by default', async () => {
    const many = await sourcesFixture(t, 'Many')
    const created: number[] = []
    for (let i = 0; i < 101; i++) created.push((await createSource(many, sourceBody(many.streamId, { description: `#${i}` }))).id)
    const first = sourcesOf(await many.send('GET', `/sites/${many.site.id}/streams`))
    expect(first.Sources.map((s) => s.id)).toEqual(created.slice(0, 100))
    expect(first.meta.cursor).toEqual({ current: 0, prev: 0, next: created[99], count: 100 })
    const rest = sourcesOf(await many.send('GET', `/sites/${many.site.id}/streams?cursor=${first.meta.cursor.next}`))
    expect(rest.Sources.map((s) => s.id)).toEqual(created.slice(100))
    expect(rest.meta.cursor.next).toBe(0)
  })
})
