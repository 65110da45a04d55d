import { describe, expect, it } from 'vitest'
import { poolOf } from '../../src/db/database.js'
import { setStreamStatus } from '../../src/streams/streams.js'
import { client, createSite, JSON_API, ndjson, uniqueName, type Client } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'

// Idempotency keys through HTTP on a real Postgres: a repeat gets the first answer and changes
// nothing; a repeat while the first runs is a 409; the key with another request a 422; a request
// refused before it changed anything keeps no key; a key is free again after IDEMPOTENCY_TTL_HOURS
// (the clock is the test's).

const t = useTestApp({ ...HIGH_LIMITS, RUN_CONCURRENCY: '0', SCHEDULER_INTERVAL_SECONDS: '0', IDEMPOTENCY_TTL_HOURS: '24' })
const ROWS = ndjson([
  { id: 'a', title: 'Shirt' },
  { id: 'b', title: 'Shoe' },
])

async function newStream(c: Client): Promise<string> {
  const created = await t.request({
    method: 'POST',
    url: '/streams',
    headers: { ...c.account.bearer, 'content-type': JSON_API },
    payload: JSON.stringify({ data: { type: 'stream', attributes: { name: uniqueName() } } }),
  })
  expect(created.statusCode, created.body).toBe(201)
  return created.json<{ data: { id: string } }>().data.id
}

function upload(c: Client, streamId: string, key: string | null, body = ROWS, extra: Record<string, string> = {}) {
  const headers: Record<string, string> = { ...c.account.bearer, 'content-type': 'application/x-ndjson', ...extra }
  if (key !== null) headers['idempotency-key'] = key
  return t.request({ method: 'POST', url: `/streams/${streamId}/products`, headers, payload: body })
}

async function batchCount(streamId: string): Promise<number> {
  const rows = await t.db.selectFrom('batch').select('id').where('stream_id', '=', streamId).execute()
  return rows.length
}

describe('Idempotency-Key', () => {
  it('answers a repeated upload with the first answer, byte for byte, and stores one batch', async () => {
    const c = await client(t)
    const streamId = await newStream(c)
    const first = await upload(c, streamId, 'upload-0001')
    expect(first.statusCode, first.body).toBe(202)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    const again = await upload(c, streamId, 'upload-0001')
    expect(again.statusCode).toBe(202)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.headers['content-type']).toBe(first.headers['content-type'])
    expect(again.body).toBe(first.body)
    expect(await batchCount(streamId)).toBe(1)
    // Without a key, the same body is a new upload.
    expect((await upload(c, streamId, null)).statusCode).toBe(202)
    expect(await batchCount(streamId)).toBe(2)
    // The key is in the activity entry of a change made with one: a deletion of products.
    const deleted = await t.request({
      method: 'DELETE',
      url: `/streams/${streamId}/products?all=true`,
      headers: { ...c.account.bearer, 'idempotency-key': 'wipe-1' },
    })
    expect(deleted.statusCode, deleted.body).toBe(202)
    const replayedDelete = await t.request({
      method: 'DELETE',
      url: `/streams/${streamId}/products?all=true`,
      headers: { ...c.account.bearer, 'idempotency-key': 'wipe-1' },
    })
    expect(replayedDelete.headers['idempotent-replayed']).toBe('true')
    expect(replayedDelete.body).toBe(deleted.body)
    expect(await batchCount(streamId)).toBe(3)
    const entries = (await c.get('/activity?action=products.deleted')).json<{ Activity: { request: { idempotency_key: string } }[] }>().Activity
    expect(entries.map((e) => e.request.idempotency_key)).toEqual(['wipe-1'])
    // A route that takes no key (a PUT) does not claim to have honoured one.
    const project = (await c.post('/projects', { name: 'P' })).json<{ Projects: { id: string }[] }>().Projects[0]!
    const put = { method: 'PUT' as const, url: `/platform/v2/projects/${project.id}`, headers: { ...c.account.platform, 'idempotency-key': 'put-1' } }
    expect((await t.request({ ...put, payload: { name: 'Q' } })).statusCode).toBe(200)
    const updated = (await c.get('/activity?action=project.updated')).json<{ Activity: { request: { idempotency_key: string | null } }[] }>().Activity
    expect(updated.map((e) => e.request.idempotency_key)).toEqual([null])
  })

  it('replays creating POSTs of both interfaces: one project, one run, one stream with its Location', async () => {
    const c = await client(t)
    const headers = { ...c.account.platform, 'idempotency-key': 'project-create-7' }
    const first = await t.request({ method: 'POST', url: '/platform/v2/projects', headers, payload: { name: 'Once' } })
    const again = await t.request({ method: 'POST', url: '/platform/v2/projects', headers, payload: { name: 'Once' } })
    expect(first.statusCode).toBe(201)
    expect(again.statusCode).toBe(201)
    expect(again.body).toBe(first.body)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect((await c.get('/projects')).json<{ Projects: unknown[] }>().Projects).toHaveLength(1)

    const site = await createSite(c, { title: 'Runs', project_id: first.json<{ Projects: { id: string }[] }>().Projects[0]!.id })
    const run = {
      method: 'POST' as const,
      url: `/platform/v2/process/${site.id}`,
      headers: { ...c.account.bearer, 'idempotency-key': 'run-1' },
      payload: { action: 'import' },
    }
    const queued = await t.request(run)
    const repeated = await t.request(run)
    expect(queued.statusCode, queued.body).toBe(200)
    expect(repeated.body).toBe(queued.body)
    expect(repeated.headers['idempotent-replayed']).toBe('true')
    const runs = await t.db.selectFrom('run').select('pid').where('site_id', '=', site.id).execute()
    expect(runs.map((r) => r.pid)).toEqual([queued.json<{ process_id: string }>().process_id])

    const stream = { method: 'POST' as const, url: '/streams', headers: { ...c.account.bearer, 'content-type': JSON_API, 'idempotency-key': 'stream-1' } }
    const payload = JSON.stringify({ data: { type: 'stream', attributes: { name: uniqueName() } } })
    const made = await t.request({ ...stream, payload })
    const remade = await t.request({ ...stream, payload })
    expect(made.statusCode).toBe(201)
    expect(remade.statusCode).toBe(201)
    expect(remade.headers.location).toBe(made.headers.location)
    expect(remade.body).toBe(made.body)
  })

  it('answers 409 with Retry-After to a repeat while the first still runs, then the first answer', async () => {
    const c = await client(t)
    const streamId = await newStream(c)
    // The first upload is held at its batch insert by a lock the test holds, with its key claimed.
    const holder = await poolOf(t.db).connect()
    await holder.query('BEGIN; LOCK TABLE batch IN EXCLUSIVE MODE')
    let first: ReturnType<typeof upload> | undefined
    try {
      first = upload(c, streamId, 'concurrent-1')
      await eventually(
        async () => {
          const claim = await t.db.selectFrom('idempotency_key').select('state').where('key', '=', 'concurrent-1').executeTakeFirst()
          return claim?.state === 'running'
        },
        { what: 'the first upload to claim its key' },
      )
      const second = await upload(c, streamId, 'concurrent-1')
      expect(second.statusCode, second.body).toBe(409)
      expect(second.headers['retry-after']).toBe('1')
      expect(second.json<{ errors: { detail: string }[] }>().errors[0]!.detail).toMatch(/Idempotency-Key "concurrent-1" is still running/)
    } finally {
      await holder.query('COMMIT')
      holder.release()
    }
    const answered = await first!
    expect(answered.statusCode, answered.body).toBe(202)
    const third = await upload(c, streamId, 'concurrent-1')
    expect(third.headers['idempotent-replayed']).toBe('true')
    expect(third.body).toBe(answered.body)
    expect(await batchCount(streamId)).toBe(1)
  })

  it('answers 422 naming the key when it comes with another request', async () => {
    const c = await client(t)
    const streamId = await newStream(c)
    expect((await upload(c, streamId, 'key-A')).statusCode).toBe(202)
    const otherBody = await upload(c, streamId, 'key-A', ndjson([{ id: 'z' }]))
    expect(otherBody.statusCode).toBe(422)
    expect(otherBody.json<{ errors: { detail: string }[] }>().errors[0]!.detail).toMatch(/Idempotency-Key "key-A" was used for a different request/)
    // Another path (a platform request) with the key: a 422 in the platform's own body.
    const project = await t.request({
      method: 'POST',
      url: '/platform/v2/projects',
      headers: { ...c.account.platform, 'idempotency-key': 'key-A' },
      payload: { name: 'X' },
    })
    expect(project.statusCode).toBe(422)
    expect(project.json<{ success: boolean; message: string }>()).toEqual({
      success: false,
      message: expect.stringMatching(/Idempotency-Key "key-A"/) as string,
    })
    // The same request with the other credential of the account is another request.
    const site = await createSite(c, {
      title: 'S',
      project_id: (await c.post('/projects', { name: 'P' })).json<{ Projects: { id: string }[] }>().Projects[0]!.id,
    })
    const byToken = await t.request({
      method: 'POST',
      url: `/platform/v2/process/${site.id}`,
      headers: { ...c.account.bearer, 'idempotency-key': 'run-x' },
      payload: { action: 'import' },
    })
    const byPlatform = await t.request({
      method: 'POST',
      url: `/platform/v2/process/${site.id}`,
      headers: { ...c.account.platform, 'idempotency-key': 'run-x' },
      payload: { action: 'import' },
    })
    expect(byToken.statusCode).toBe(200)
    expect(byPlatform.statusCode).toBe(422)
    expect(await batchCount(streamId)).toBe(1)
    // Keys belong to the account: another account's same key is its own.
    const other = await client(t)
    expect((await upload(other, await newStream(other), 'key-A')).statusCode).toBe(202)
  })

  it('keeps nothing for a refused request: its retry with the key runs', async () => {
    const c = await client(t)
    const streamId = await newStream(c)
    await setStreamStatus(t.db, streamId, 'locked', new Date())
    expect((await upload(c, streamId, 'refused-1')).statusCode).toBe(423)
    await setStreamStatus(t.db, streamId, 'active', new Date())
    const wrongType = await upload(c, streamId, 'refused-1', ROWS, { 'content-type': 'text/csv' })
    expect(wrongType.statusCode).toBe(415)
    const empty = await upload(c, streamId, 'refused-1', '\n\n')
    expect(empty.statusCode).toBe(422)
    const retried = await upload(c, streamId, 'refused-1')
    expect(retried.statusCode, retried.body).toBe(202)
    expect(retried.headers['idempotent-replayed']).toBeUndefined()
    expect(await batchCount(streamId)).toBe(1)
    // A refused platform request (a 400 of validation) keeps no key either.
    const headers = { ...c.account.platform, 'idempotency-key': 'refused-2' }
    expect((await t.request({ method: 'POST', url: '/platform/v2/projects', headers, payload: { name: '' } })).statusCode).toBe(400)
    expect((await t.request({ method: 'POST', url: '/platform/v2/projects', headers, payload: { name: 'Now' } })).statusCode).toBe(201)
    expect(await t.db.selectFrom('idempotency_key').select('key').where('account_id', '=', c.account.accountId).orderBy('key').execute()).toEqual([
      { key: 'refused-1' },
      { key: 'refused-2' },
    ])
  })

  it('frees a key after IDEMPOTENCY_TTL_HOURS', async () => {
    const c = await client(t)
    const streamId = await newStream(c)
    expect((await upload(c, streamId, 'ttl-1')).statusCode).toBe(202)
    t.clock.advance(23 * 3600_000)
    expect((await upload(c, streamId, 'ttl-1')).headers['idempotent-replayed']).toBe('true')
    t.clock.advance(2 * 3600_000)
    const later = await upload(c, streamId, 'ttl-1')
    expect(later.statusCode).toBe(202)
    expect(later.headers['idempotent-replayed']).toBeUndefined()
    expect(await batchCount(streamId)).toBe(2)
  })

  it('refuses a malformed key with a 400 in each interface', async () => {
    const c = await client(t)
    const streamId = await newStream(c)
    for (const key of ['k'.repeat(256), 'has space', '']) {
      const stream = await upload(c, streamId, key)
      expect(stream.statusCode, JSON.stringify(key)).toBe(400)
      expect(stream.json<{ errors: { detail: string }[] }>().errors[0]!.detail).toMatch(/Idempotency-Key: must be 1 to 255 visible ASCII/)
      const platform = await t.request({
        method: 'POST',
        url: '/platform/v2/projects',
        headers: { ...c.account.platform, 'idempotency-key': key },
        payload: { name: 'P' },
      })
      expect(platform.statusCode).toBe(400)
      expect(platform.json<{ message: string }>().message).toMatch(/Idempotency-Key/)
    }
    expect(await batchCount(streamId)).toBe(0)
    expect((await upload(c, streamId, 'k'.repeat(255))).statusCode).toBe(202)
  })
})
