import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { createSite, createSource, CREDENTIALS, headersFor, listSources, sourceBody } from '../helpers/clients.js'
import { factories, sourcesFixture, type SourcesFixture } from '../helpers/factories.js'
import { expectError, NOT_FOUND, oneSource, UNAUTHORIZED, type SourceJson } from '../helpers/responses.js'

const t = useTestApp(HIGH_LIMITS)
const given = factories(t)

type Fields = { import_type: number; description: string; status: string; import_empty?: boolean }

function expectSource(source: SourceJson, f: SourcesFixture, streamId: string, fields: Fields) {
  expect(source).toEqual({
    id: source.id,
    site_id: Number(f.site.id),
    description: fields.description,
    source: 'stream',
    import_type: fields.import_type,
    import_id: source.import_id,
    status: fields.status,
    settings: [`stream : ${streamId}`],
    stream_id: Number(streamId),
    import_empty: fields.import_empty ?? false,
  })
  expect(Number.isInteger(source.id) && source.id > 0, `id ${source.id}`).toBe(true)
  expect(Number.isInteger(source.import_id) && source.import_id > 0, `import_id ${source.import_id}`).toBe(true)
}

describe('create', () => {
  it.each([
    [1, 'active'],
    [2, 'paused'],
  ])('answers 201 with Sources[1] and meta for import_type %i, status %s; the source reads back the same', async (importType, status) => {
    const f = await sourcesFixture(t)
    const response = await f.send('POST', `/sites/${f.site.id}/streams`, sourceBody(f.streamId, { import_type: importType, status, description: 'Feed A' }))
    const source = oneSource(response, 201)
    expectSource(source, f, f.streamId, { import_type: importType, description: 'Feed A', status })
    expect(oneSource(await f.send('GET', `/sites/${f.site.id}/streams/${source.id}`))).toEqual(source)
    expect(await listSources(f)).toEqual([source])
  })

  it('takes ids and import_type as strings and import_empty, and gives each source its own id', async () => {
    const f = await sourcesFixture(t)
    const first = await createSource(f, { import_type: '2', description: '', stream_id: f.streamId, status: 'paused', import_empty: true })
    expectSource(first, f, f.streamId, { import_type: 2, description: '', status: 'paused', import_empty: true })
    const second = await createSource(f)
    expect(second.id).toBeGreaterThan(first.id)
    expect((await listSources(f)).map((s) => s.id)).toEqual([first.id, second.id])
  })

  it.each(['import_type', 'description', 'stream_id', 'status'])('answers 400 naming %s when it is missing or null, and creates nothing', async (field) => {
    const f = await sourcesFixture(t)
    const missing = sourceBody(f.streamId)
    delete missing[field]
    expectError(await f.send('POST', `/sites/${f.site.id}/streams`, missing), 400, new RegExp(`^${field}: is required`))
    expectError(await f.send('POST', `/sites/${f.site.id}/streams`, sourceBody(f.streamId, { [field]: null })), 400, new RegExp(`^${field}: is required`))
    expect(await listSources(f)).toEqual([])
  })

  it('answers 400 naming import_type for the first field missing from an empty body', async () => {
    const f = await sourcesFixture(t)
    expectError(await f.send('POST', `/sites/${f.site.id}/streams`), 400, /^import_type: is required/)
    expectError(await f.send('POST', `/sites/${f.site.id}/streams`, {}), 400, /^import_type: is required/)
  })

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['import_type 3', { import_type: 3 }, /^import_type: must be 1 .* or 2/],
    ['import_type 0', { import_type: 0 }, /^import_type: must be 1 .* or 2/],
    ['import_type "main"', { import_type: 'main' }, /^import_type: must be 1 .* or 2/],
    ['status "bogus"', { status: 'bogus' }, /^status: must be one of active, paused/],
    ['status "disabled"', { status: 'disabled' }, /^status: must be one of active, paused/],
    ['stream_id "abc"', { stream_id: 'abc' }, /^stream_id: must be a positive integer/],
    ['stream_id 0', { stream_id: 0 }, /^stream_id: must be a positive integer/],
    ['an unknown stream_id', { stream_id: 987654 }, /^stream_id: no stream 987654 in this account/],
  ])('answers 400 to %s and creates nothing', async (_case, overrides, message) => {
    const f = await sourcesFixture(t)
    expectError(await f.send('POST', `/sites/${f.site.id}/streams`, sourceBody(f.streamId, overrides)), 400, message)
    expect(await listSources(f)).toEqual([])
  })

  it('answers 400 to the stream of another account, and to a deleted stream, and creates nothing', async () => {
    const f = await sourcesFixture(t)
    const other = await sourcesFixture(t, 'Other', 'Other account')
    expectError(
      await f.send('POST', `/sites/${f.site.id}/streams`, sourceBody(other.streamId)),
      400,
      new RegExp(`^stream_id: no stream ${other.streamId} in this account`),
    )

    const deleted = (await given.stream({ account: f.account })).id
    const removal = await t.request({ method: 'DELETE', url: `/streams/${deleted}`, headers: f.account.bearer })
    expect(removal.statusCode, removal.body).toBe(204)
    expectError(await f.send('POST', `/sites/${f.site.id}/streams`, sourceBody(deleted)), 400, new RegExp(`^stream_id: no stream ${deleted} in this account`))
    expect(await listSources(f)).toEqual([])
    expect(await listSources(other)).toEqual([])
  })

  it('answers 404 for a site that does not exist', async () => {
    const f = await sourcesFixture(t)
    expect((await f.send('POST', '/sites/999999/streams', sourceBody(f.streamId))).json()).toEqual(NOT_FOUND)
    expectError(await f.send('POST', '/sites/erp:missing/streams', sourceBody(f.streamId)), 404)
  })
})

describe('read, update, delete', () => {
  it('answers 404 for an unknown or malformed data source id', async () => {
    const f = await sourcesFixture(t)
    const source = await createSource(f)
    for (const id of [String(source.id + 1000), '0', 'abc', '-1']) {
      expect((await f.send('GET', `/sites/${f.site.id}/streams/${id}`)).json(), id).toEqual(NOT_FOUND)
      expectError(await f.send('PUT', `/sites/${f.site.id}/streams/${id}`, { description: 'x' }), 404)
      expectError(await f.send('DELETE', `/sites/${f.site.id}/streams/${id}`), 404)
    }
    expect(await listSources(f)).toEqual([source])
  })

  it('updates import_type, description, status and import_empty, keeping the stream', async () => {
    const f = await sourcesFixture(t)
    const source = await createSource(f)
    const path = `/sites/${f.site.id}/streams/${source.id}`
    const updated = oneSource(await f.send('PUT', path, { import_type: 2, description: 'Extra feed', status: 'paused', import_empty: true }))
    expect(updated).toEqual({ ...source, import_type: 2, description: 'Extra feed', status: 'paused', import_empty: true })
    expect(oneSource(await f.send('GET', path))).toEqual(updated)

    const partly = oneSource(await f.send('PUT', path, { description: 'Renamed', stream_id: f.streamId }))
    expect(partly).toEqual({ ...updated, description: 'Renamed' })
    const back = oneSource(await f.send('PUT', path, { import_type: '1', status: 'active', import_empty: false }))
    expect(back).toEqual({ ...source, description: 'Renamed' })
    expect(await listSources(f)).toEqual([back])
  })

  it.each<[string, (otherStream: string) => Record<string, unknown>, RegExp]>([
    ['import_type 3', () => ({ import_type: 3 }), /^import_type: must be 1 .* or 2/],
    ['status "bogus"', () => ({ status: 'bogus' }), /^status: must be one of active, paused/],
    ['another stream of the account', (other) => ({ stream_id: Number(other), description: 'Moved' }), /^stream_id: cannot be changed/],
  ])('answers 400 to an update with %s and changes nothing', async (_case, body, message) => {
    const f = await sourcesFixture(t)
    const source = await createSource(f)
    const otherStream = (await given.stream({ account: f.account })).id
    expectError(await f.send('PUT', `/sites/${f.site.id}/streams/${source.id}`, body(otherStream)), 400, message)
    expect(oneSource(await f.send('GET', `/sites/${f.site.id}/streams/${source.id}`))).toEqual(source)
  })

  // Product bug: an update that changes nothing (every field null or absent, as docs/compatibility.md says clients
  // send) answers 500. Remove `.fails` once src/sites/data-sources.ts updateDataSource handles it.
  it('answers 200 with the unchanged source to an update whose fields are all null (BUG: 500)', async () => {
    const f = await sourcesFixture(t)
    const source = await createSource(f)
    const response = await f.send('PUT', `/sites/${f.site.id}/streams/${source.id}`, {
      import_type: null,
      description: null,
      stream_id: null,
      status: null,
      import_empty: null,
    })
    expect(oneSource(response)).toEqual(source)
  })

  it('deletes with 200 {success: true, message}; the source is gone afterwards, the others stay', async () => {
    const f = await sourcesFixture(t)
    const kept = await createSource(f, sourceBody(f.streamId, { description: 'Kept' }))
    const source = await createSource(f)
    const path = `/sites/${f.site.id}/streams/${source.id}`
    const response = await f.send('DELETE', path)
    expect(response.statusCode, response.body).toBe(200)
    const body = response.json<{ success: boolean; message: string }>()
    expect(body).toEqual({ success: true, message: body.message })
    expect(body.message).toMatch(/\S/)
    expect((await f.send('GET', path)).json()).toEqual(NOT_FOUND)
    expectError(await f.send('GET', path), 404)
    expectError(await f.send('PUT', path, { description: 'x' }), 404)
    expectError(await f.send('DELETE', path), 404)
    expect(await listSources(f)).toEqual([kept])
  })
})

describe('credentials', () => {
  it.each(CREDENTIALS)('every data source endpoint accepts %s', async (credential) => {
    const f = await sourcesFixture(t)
    const base = `/sites/${f.site.id}/streams`
    const created = oneSource(await f.send('POST', base, sourceBody(f.streamId), credential), 201)
    const list = await f.send('GET', base, undefined, credential)
    expect(list.statusCode, list.body).toBe(200)
    expect(list.json<{ Sources: SourceJson[] }>().Sources).toEqual([created])
    expect(oneSource(await f.send('GET', `${base}/${created.id}`, undefined, credential))).toEqual(created)
    expect(oneSource(await f.send('PUT', `${base}/${created.id}`, { status: 'paused' }, credential))).toEqual({ ...created, status: 'paused' })
    const removal = await f.send('DELETE', `${base}/${created.id}`, undefined, credential)
    expect(removal.statusCode, removal.body).toBe(200)
    expect(removal.json<{ success: boolean }>().success).toBe(true)
    expect(await listSources(f)).toEqual([])
  })

  it('the bearer token is refused where the platform takes only X-Auth-Token', async () => {
    const f = await sourcesFixture(t)
    const bearer = headersFor(f.account, 'bearer')
    const projects = await t.request({ method: 'GET', url: '/platform/v2/projects', headers: bearer })
    expect(projects.statusCode, projects.body).toBe(401)
    expect(projects.json()).toEqual(UNAUTHORIZED)
    const site = await t.request({ method: 'GET', url: `/platform/v2/sites/${f.site.id}`, headers: bearer })
    expect(site.statusCode, site.body).toBe(401)
    expect((await t.request({ method: 'GET', url: '/platform/v2/projects', headers: f.account.platform })).statusCode).toBe(200)
    expect((await f.send('GET', `/sites/${f.site.id}/streams`, undefined, 'bearer')).statusCode).toBe(200)
  })

  it('answers 401 to a missing or invalid credential on every data source endpoint and changes nothing', async () => {
    const f = await sourcesFixture(t)
    const source = await createSource(f)
    const base = `/platform/v2/sites/${f.site.id}/streams`
    const invalid: Record<string, string>[] = [
      { accept: 'application/json' },
      { authorization: 'Bearer not-a-token' },
      { authorization: `Basic ${f.account.token}` },
      { authorization: `Bearer ${f.account.xAuthToken}` },
      { 'x-auth-token': f.account.token },
    ]
    for (const headers of invalid) {
      for (const [method, url, payload] of [
        ['GET', base, undefined],
        ['POST', base, sourceBody(f.streamId)],
        ['GET', `${base}/${source.id}`, undefined],
        ['PUT', `${base}/${source.id}`, { description: 'Hijacked' }],
        ['DELETE', `${base}/${source.id}`, undefined],
      ] as const) {
        const response = await t.request({ method, url, headers, ...(payload === undefined ? {} : { payload }) })
        expect(response.statusCode, `${method} ${url} ${JSON.stringify(headers)}`).toBe(401)
        expect(response.json()).toEqual(UNAUTHORIZED)
      }
    }
    expect(await listSources(f)).toEqual([source])
  })
})

describe('account isolation', () => {
  it.each(CREDENTIALS)("answers 404 with %s to another account's site and data source, and changes nothing", async (credential) => {
    const owner = await sourcesFixture(t, 'Owner', 'Owner account')
    const source = await createSource(owner)
    const intruder = await sourcesFixture(t, 'Intruder', 'Intruder account')
    const theirs = `/sites/${owner.site.id}/streams`
    const mine = `/sites/${intruder.site.id}/streams`
    for (const [method, path, payload] of [
      ['GET', theirs, undefined],
      ['POST', theirs, sourceBody(intruder.streamId)],
      ['GET', `${theirs}/${source.id}`, undefined],
      ['PUT', `${theirs}/${source.id}`, { description: 'Hijacked' }],
      ['DELETE', `${theirs}/${source.id}`, undefined],
      ['GET', '/sites/erp:owner/streams', undefined],
      ['GET', `${mine}/${source.id}`, undefined],
      ['PUT', `${mine}/${source.id}`, { description: 'Hijacked' }],
      ['DELETE', `${mine}/${source.id}`, undefined],
    ] as const) {
      const response = await intruder.send(method, path, payload, credential)
      expect(response.statusCode, `${method} ${path}: ${response.body}`).toBe(404)
      expect(response.json()).toEqual(NOT_FOUND)
    }
    expect(await listSources(owner)).toEqual([source])
    expect(await listSources(intruder)).toEqual([])
  })

  it('answers 404 to a data source addressed through another site of the same account', async () => {
    const f = await sourcesFixture(t)
    const other = await createSite(f.c, { title: 'Second', project_id: f.site.project_id })
    const source = await createSource(f)
    const elsewhere = `/sites/${other.id}/streams/${source.id}`
    for (const credential of CREDENTIALS) {
      for (const method of ['GET', 'PUT', 'DELETE'] as const) {
        const response = await f.send(method, elsewhere, method === 'PUT' ? { status: 'paused' } : undefined, credential)
        expect(response.statusCode, `${method}: ${response.body}`).toBe(404)
        expect(response.json()).toEqual(NOT_FOUND)
      }
    }
    expect(await listSources(f, other.id)).toEqual([])
    expect(oneSource(await f.send('GET', `/sites/${f.site.id}/streams/${source.id}`))).toEqual(source)
  })
})

describe('site addressed by reference', () => {
  it.each(CREDENTIALS)('creates, lists, reads, updates and deletes through erp:<value> with %s', async (credential) => {
    const f = await sourcesFixture(t, 'Referenced')
    const base = '/sites/erp:referenced/streams'
    const created = oneSource(await f.send('POST', base, sourceBody(f.streamId, { import_type: 2 }), credential), 201)
    expect(created.site_id).toBe(Number(f.site.id))
    expect(await listSources(f, 'erp:referenced')).toEqual([created])
    expect(await listSources(f)).toEqual([created])
    expect(oneSource(await f.send('GET', `${base}/${created.id}`, undefined, credential))).toEqual(created)
    const updated = oneSource(await f.send('PUT', `${base}/${created.id}`, { description: 'Via reference' }, credential))
    expect(updated).toEqual({ ...created, description: 'Via reference' })
    expect((await f.send('DELETE', `${base}/${created.id}`, undefined, credential)).statusCode).toBe(200)
    expect(await listSources(f)).toEqual([])
    expectError(await f.send('GET', '/sites/erp:unknown/streams', undefined, credential), 404)
  })
})
