import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp, type TestContext } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { BASE, expectError, TIMESTAMP, UUID, type Links } from '../helpers/responses.js'
import type { Response } from '../helpers/clients.js'

// POST /platform/v2/process/{siteId}, the run status, the site errors and the import history
// (docs/interface.md 2 "Process", "Site status", "Import history", "Site error"; 4 "Platform: errors, history,
// channels", "Platform: processing and status"; docs/compatibility.md; docs/design.md 5.5). Runs execute in the real
// worker; a run is held in `running` by a lock on stage_product taken from a separate connection.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

interface ProcessJson {
  success: boolean
  process_id: string
  estimated_duration: number
  message: string
}

interface StatusJson {
  success: boolean
  status: string
  message: string
  links: Links
}

interface ErrorEntry {
  id: string
  pid: string
  error: string
  data: string
  site_id: string
  message: string
  datetime: string
  type: string
  classification: string
  links: Links
}

interface HistoryEntry {
  id: string
  site_id: number
  import_time: string
  import_time_utc: string
  product_count: string
  pid: string
  links: Links
}

const ACTION_LIST = /import, export, channel, export-all, all/

/** A site with one main stream carrying `rows` (default two products): an import of it succeeds. */
async function readySite(
  siteBody: Record<string, unknown> = {},
  rows: object[] = [
    { id: 'A', title: 'Shirt' },
    { id: 'B', title: 'Shoe' },
  ],
): Promise<{ f: ImportFixture; stream: string }> {
  const f = await importFixture(t, siteBody)
  const stream = await f.createStream()
  await f.attach(stream)
  const upload = await f.upload(stream, rows)
  expect(upload.statusCode, upload.body).toBe(202)
  return { f, stream }
}

function accepted(response: Response): ProcessJson {
  expect(response.statusCode, response.body).toBe(200)
  const body = response.json<ProcessJson>()
  expect(body).toEqual({ success: true, process_id: expect.stringMatching(UUID), estimated_duration: expect.any(Number), message: expect.any(String) })
  return body
}

async function runsOf(siteId: string) {
  return t.db.selectFrom('run').selectAll().where('site_id', '=', siteId).orderBy('created_at').execute()
}

async function processingStatus(f: ImportFixture): Promise<string> {
  const response = await f.platform('GET', `/sites/${f.site.id}`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ Sites: { processing_status: string }[] }>().Sites[0]?.processing_status ?? ''
}

async function errorsPage(f: ImportFixture, query: string): Promise<ErrorEntry[]> {
  const response = await f.platform('GET', `/sites/${f.site.id}/errors${query}`)
  expect(response.statusCode, response.body).toBe(200)
  const body = response.json<{ success: boolean; Errors: ErrorEntry[] }>()
  expect(body.success).toBe(true)
  return body.Errors
}

async function history(f: ImportFixture): Promise<HistoryEntry[]> {
  const response = await f.platform('GET', `/sites/${f.site.id}/importhistory`)
  expect(response.statusCode, response.body).toBe(200)
  const body = response.json<{ success: boolean; Importhistory: HistoryEntry[] }>()
  expect(body.success).toBe(true)
  return body.Importhistory
}

/** Runs `work` while a separate connection holds stage_product exclusively: an import blocks in `running`. */
async function holdingImports<T>(context: TestContext, work: () => Promise<T>): Promise<T> {
  const holder = new pg.Client({ connectionString: context.database.url })
  await holder.connect()
  try {
    await holder.query('BEGIN')
    await holder.query('LOCK TABLE stage_product IN ACCESS EXCLUSIVE MODE')
    return await work()
  } finally {
    await holder.query('ROLLBACK').catch(() => undefined)
    await holder.end()
  }
}

describe('process request validation', () => {
  it.each<[string, Record<string, unknown> | undefined, RegExp]>([
    ['no body', undefined, /^action is required: one of import, export, channel, export-all, all/],
    ['an empty object', {}, /^action is required/],
    ['action null', { action: null, id: null }, /^action is required/],
    ['an empty action', { action: '' }, /^action is required/],
    ['an unknown action', { action: 'bogus' }, /^action "bogus" is not one of import, export, channel, export-all, all/],
    ['export without id', { action: 'export' }, /^id is required for action export/],
    ['export with id null', { action: 'export', id: null }, /^id is required for action export/],
    ['channel without id', { action: 'channel' }, /^id is required for action channel/],
    ['channel with an empty id', { action: 'channel', id: '' }, /^id is required for action channel/],
    ['channel with a non-numeric id', { action: 'channel', id: 'abc' }, /^id must be a positive integer/],
    ['channel with id 0', { action: 'channel', id: 0 }, /^id must be a positive integer/],
    ['export with a negative id', { action: 'export', id: -4 }, /^id must be a positive integer/],
    ['export with a fractional id', { action: 'export', id: 1.5 }, /^id must be a positive integer/],
  ])('answers 400 to %s, naming the problem, and queues nothing', async (_case, body, message) => {
    const f = await importFixture(t)
    const response = await t.request({
      method: 'POST',
      url: `/platform/v2/process/${f.site.id}`,
      headers: f.account.platform,
      ...(body === undefined ? {} : { payload: body }),
    })
    expectError(response, 400, message)
    expect(await runsOf(f.site.id)).toEqual([])
  })

  it('names the accepted actions when the action is unknown', async () => {
    const f = await importFixture(t)
    expectError(await f.process({ action: 'IMPORT' }), 400, ACTION_LIST)
    expectError(await f.process({ action: 'export_all' }), 400, ACTION_LIST)
    expect(await runsOf(f.site.id)).toEqual([])
  })

  it.each<[string, Record<string, unknown>]>([
    ['import', { action: 'import' }],
    ['export', { action: 'export', id: 3 }],
    ['channel', { action: 'channel', id: 3 }],
    ['export-all', { action: 'export-all' }],
    ['all', { action: 'all' }],
  ])('answers 400 to %s on a disabled site, saying it is disabled, and queues nothing', async (_action, body) => {
    const { f } = await readySite()
    const disable = await f.platform('PUT', `/sites/${f.site.id}`, { status: 'disabled' })
    expect(disable.statusCode, disable.body).toBe(200)
    expectError(await f.process(body), 400, new RegExp(`Site ${f.site.id} is disabled`))
    expect(await runsOf(f.site.id)).toEqual([])
  })

  it.each<[string, Record<string, unknown>]>([
    ['export', { action: 'export', id: 3 }],
    ['channel', { action: 'channel', id: '3' }],
    ['export-all', { action: 'export-all' }],
  ])('answers 400 to %s on a paused_upload site, saying it does not export, and queues nothing', async (_action, body) => {
    const { f } = await readySite({ status: 'paused_upload' })
    expectError(await f.process(body), 400, new RegExp(`Site ${f.site.id} is paused_upload: it imports but does not export`))
    expect(await runsOf(f.site.id)).toEqual([])
  })

  it('imports on a paused_upload site, for import and for all, without exporting', async () => {
    const { f } = await readySite({ status: 'paused_upload' })
    const imported = await f.run('import')
    expect(imported.status, imported.message).toBe('success')
    expect(imported.message).toMatch(/Imported 2 products/)
    const all = await f.run('all')
    expect(all.status, all.message).toBe('success')
    expect(all.message).toMatch(/Imported 2 products/)
    expect(all.message).toMatch(/Not exported: the site is paused_upload/)
    expect(await f.errors(all.pid)).toEqual([])
    expect((await history(f)).map((entry) => entry.pid)).toEqual([all.pid, imported.pid])
  })

  it('answers 404 for a site that does not exist, by id or by tag', async () => {
    const f = await importFixture(t)
    expectError(await f.platform('POST', '/process/999999999', { action: 'import' }), 404)
    expectError(await f.platform('POST', '/process/erp:nothing-here', { action: 'import' }), 404)
  })
})

describe('process body forms (docs/compatibility.md)', () => {
  it.each<[string, string, string | null]>([
    ['{"action":"import"}', 'import', null],
    ['{"id":null,"action":"import"}', 'import', null],
    ['{"id":51395,"action":"channel"}', 'channel', '51395'],
    ['{"id":"51395","action":"channel"}', 'channel', '51395'],
  ])('accepts %s and runs it (channel 51395 does not exist: that run fails naming it)', async (raw, action, targetId) => {
    const { f } = await readySite()
    const response = await t.request({
      method: 'POST',
      url: `/platform/v2/process/${f.site.id}`,
      headers: { ...f.account.platform, 'content-type': 'application/json' },
      payload: raw,
    })
    const body = accepted(response)
    const ended = await f.waitFor(body.process_id)
    const outcome = action === 'channel' ? 'failed' : 'success'
    expect(ended.status, ended.message).toBe(outcome)
    const [run] = await runsOf(f.site.id)
    expect(run).toMatchObject({ pid: body.process_id, action, target_id: targetId, trigger: 'api', status: outcome })
    if (action === 'channel') expect(ended.message).toMatch(/channel 51395/)
  })

  it('reads a JSON body that comes without any Content-Type header', async () => {
    const { f } = await readySite()
    for (const raw of ['{"action":"import"}', '{"id":"51395","action":"channel"}']) {
      const response = await t.request({ method: 'POST', url: `/platform/v2/process/${f.site.id}`, headers: f.account.platform, payload: raw })
      expect(response.raw.req.headers['content-type'], 'the request carried no Content-Type').toBeUndefined()
      const ended = await f.waitFor(accepted(response).process_id)
      expect(ended.status, ended.message).toBe(raw.includes('channel') ? 'failed' : 'success')
    }
    expect((await runsOf(f.site.id)).map((run) => run.action)).toEqual(['import', 'channel'])
  })
})

describe('one running and one queued run per site', () => {
  it('refuses a third request with 400 while one runs and one waits; the waiting one runs once the first ends', async () => {
    const { f } = await readySite()
    expect(await processingStatus(f)).toBe('Done')
    const { first, second } = await holdingImports(t, async () => {
      const first = accepted(await f.process({ action: 'import' }))
      expect(first.message).toMatch(/queued/i)
      expect((await f.waitFor(first.process_id, ['running', 'success', 'failed'])).status).toBe('running')
      expect(await processingStatus(f)).toBe('Running')

      const second = accepted(await f.process({ action: 'all' }))
      expect(second.message).toContain(first.process_id)
      expect((await f.waitFor(second.process_id, ['queued', 'running', 'success', 'failed'])).status).toBe('queued')

      for (const body of [{ action: 'import' }, { action: 'export-all' }, { action: 'channel', id: 4 }]) {
        expectError(await f.process(body), 400, new RegExp(`already queued \\(process ${second.process_id}\\)`))
      }
      expect((await runsOf(f.site.id)).map((run) => run.pid).sort()).toEqual([first.process_id, second.process_id].sort())
      // Still held: the first run is running and the second waits.
      expect((await f.waitFor(first.process_id, ['running', 'success', 'failed'])).status).toBe('running')
      expect(await processingStatus(f)).toBe('Running')
      return { first, second }
    })
    const firstEnd = await f.waitFor(first.process_id)
    expect(firstEnd.status, firstEnd.message).toBe('success')
    const secondEnd = await f.waitFor(second.process_id)
    expect(secondEnd.status, secondEnd.message).toBe('success')
    expect(secondEnd.message).toMatch(/Imported 2 products/)
    expect(await processingStatus(f)).toBe('Done')

    // A slot is free again: the site takes a new run.
    const again = await f.run('import')
    expect(again.status, again.message).toBe('success')
  })

  it('a run of another site is not held back by a full site', async () => {
    const { f } = await readySite()
    const other = await readySite()
    const { first, second, elsewhere } = await holdingImports(t, async () => {
      const first = accepted(await f.process({ action: 'import' }))
      await f.waitFor(first.process_id, ['running'])
      const second = accepted(await f.process({ action: 'import' }))
      expectError(await f.process({ action: 'import' }), 400, /already queued/)
      // The other site may queue (its run waits for the same table lock, but it is accepted).
      const elsewhere = accepted(await other.f.process({ action: 'import' }))
      return { first, second, elsewhere }
    })
    expect((await f.waitFor(first.process_id)).status).toBe('success')
    expect((await f.waitFor(second.process_id)).status).toBe('success')
    expect((await other.f.waitFor(elsewhere.process_id)).status).toBe('success')
  })
})

describe('status of a run', () => {
  it('answers GET and POST alike, with self and site links and no errors link on success', async () => {
    const { f } = await readySite()
    const run = await f.run('import')
    expect(run.status, run.message).toBe('success')
    const path = `/sites/${f.site.id}/status/${run.pid}`
    const viaGet = await f.platform('GET', path)
    expect(viaGet.statusCode, viaGet.body).toBe(200)
    const body = viaGet.json<StatusJson>()
    expect(body).toEqual({ success: true, status: 'success', message: expect.stringMatching(/Imported 2 products/), links: expect.any(Array) })
    expect(body.links).toContainEqual({ self: `${BASE}/platform/v2/sites/${f.site.id}/status/${run.pid}` })
    expect(body.links.some((link) => 'errors' in link)).toBe(false)
    for (const link of body.links) expect(Object.keys(link)).toHaveLength(1)

    const viaPost = await f.platform('POST', path)
    expect(viaPost.statusCode, viaPost.body).toBe(200)
    expect(viaPost.json()).toEqual(body)
    const viaPostWithBody = await f.platform('POST', path, { pid: run.pid })
    expect(viaPostWithBody.json()).toEqual(body)
  })

  it('finds the site by its reference on status, errors and import history', async () => {
    const { f } = await readySite({ reference: 'erp:by-reference' })
    const run = await f.run('all')
    expect(run.status, run.message).toBe('success')
    const status = await f.platform('GET', `/sites/erp:by-reference/status/${run.pid}`)
    expect(status.statusCode, status.body).toBe(200)
    expect(status.json<StatusJson>().status).toBe('success')
    expect(status.json<StatusJson>().links).toContainEqual({ self: `${BASE}/platform/v2/sites/${f.site.id}/status/${run.pid}` })
    const errors = await f.platform('GET', '/sites/erp:by-reference/errors')
    expect(errors.json<{ Errors: ErrorEntry[] }>().Errors.map((e) => e.pid)).toEqual([run.pid])
    const entries = await f.platform('GET', '/sites/erp:by-reference/importhistory')
    expect(entries.json<{ Importhistory: HistoryEntry[] }>().Importhistory.map((e) => e.pid)).toEqual([run.pid])
  })

  it('a failed run links its errors, and the link lists them', async () => {
    const f = await importFixture(t)
    const run = await f.run('import')
    expect(run.status).toBe('failed')
    expect(run.message).toMatch(/no active main data source/)
    for (const method of ['GET', 'POST'] as const) {
      const response = await f.platform(method, `/sites/${f.site.id}/status/${run.pid}`)
      expect(response.statusCode, response.body).toBe(200)
      const body = response.json<StatusJson>()
      expect(body.status).toBe('failed')
      expect(body.message).toBe(run.message)
      const errorsLink = `${BASE}/platform/v2/sites/${f.site.id}/errors?pid=${run.pid}`
      expect(body.links).toContainEqual({ errors: errorsLink })
      expect(body.links).toContainEqual({ self: `${BASE}/platform/v2/sites/${f.site.id}/status/${run.pid}` })
    }
    const listed = await errorsPage(f, `?pid=${run.pid}`)
    expect(listed.map((e) => [e.error, e.type, e.classification, e.pid])).toEqual([['1002', 'Error', 'high', run.pid]])
  })

  it('answers 404 with a message for an unknown or malformed pid, on GET and POST', async () => {
    const { f } = await readySite()
    const run = await f.run('import')
    const sibling = await importFixture(t, {}, f.c)
    for (const pid of ['00000000-0000-4000-8000-000000000000', randomUUID(), 'abc', '12345', `${run.pid}x`, run.pid.slice(0, -1), "1' OR '1'='1"]) {
      for (const method of ['GET', 'POST'] as const) {
        expectError(await f.platform(method, `/sites/${f.site.id}/status/${encodeURIComponent(pid)}`), 404)
      }
    }
    // A pid of another site of the same account is not a run of this site.
    expectError(await f.platform('GET', `/sites/${sibling.site.id}/status/${run.pid}`), 404)
    expectError(await f.platform('POST', `/sites/${sibling.site.id}/status/${run.pid}`), 404)
    expectError(await f.platform('GET', `/sites/999999999/status/${run.pid}`), 404)
  })
})

/** Replaces the measured duration of a finished run by a known one (its finish stays where it was). */
async function recordDuration(pid: string, seconds: number): Promise<void> {
  await sql`UPDATE run SET started_at = finished_at - make_interval(secs => ${seconds}) WHERE pid = ${pid}`.execute(t.db)
}

/** A finished run of the site written straight into its history: `seconds` long, ended `hoursAgo`. */
async function pastRun(f: ImportFixture, run: { action: 'import' | 'all'; status: 'success' | 'failed'; seconds: number; hoursAgo: number }): Promise<void> {
  const finished = new Date(Date.now() - run.hoursAgo * 3_600_000)
  await t.db
    .insertInto('run')
    .values({
      pid: randomUUID(),
      account_id: f.account.accountId,
      site_id: f.site.id,
      action: run.action,
      target_id: null,
      trigger: 'api',
      status: run.status,
      admitted_at: null,
      claimed_at: null,
      heartbeat_at: null,
      started_at: new Date(finished.getTime() - run.seconds * 1000),
      finished_at: finished,
    })
    .execute()
}

describe('estimated_duration', () => {
  // The rule (process-routes.ts, run-store.ts): the mean duration of the last five successful
  // runs of the same action on the site, in seconds rounded to 0.1; 0 without such a run.
  it('is 0 for a site without history and a number >= 0 once runs have succeeded', async () => {
    const { f } = await readySite()
    const first = accepted(await f.process({ action: 'import' }))
    expect(first.estimated_duration).toBe(0)
    expect((await f.waitFor(first.process_id)).status).toBe('success')
    const second = await f.run('import')
    expect(second.status).toBe('success')
    await recordDuration(first.process_id, 12)
    await recordDuration(second.pid, 30.26)

    const third = accepted(await f.process({ action: 'import' }))
    expect(typeof third.estimated_duration).toBe('number')
    expect(Number.isFinite(third.estimated_duration)).toBe(true)
    expect(third.estimated_duration).toBeGreaterThanOrEqual(0)
    // (12 + 30.26) / 2 = 21.13
    expect(third.estimated_duration).toBe(21.1)
    expect((await f.waitFor(third.process_id)).status).toBe('success')
    await recordDuration(third.process_id, 3)

    const all = accepted(await f.process({ action: 'all' }))
    expect(all.estimated_duration).toBeGreaterThanOrEqual(0)
    // Runs of another action are not its history.
    expect(all.estimated_duration).toBe(0)
    expect((await f.waitFor(all.process_id)).status).toBe('success')
  })

  it('averages the last five successful runs of the action only', async () => {
    const { f } = await readySite()
    await pastRun(f, { action: 'import', status: 'success', seconds: 1000, hoursAgo: 6 }) // sixth latest: left out
    await pastRun(f, { action: 'import', status: 'success', seconds: 10, hoursAgo: 5 })
    await pastRun(f, { action: 'import', status: 'success', seconds: 20, hoursAgo: 4 })
    await pastRun(f, { action: 'import', status: 'success', seconds: 3, hoursAgo: 3 })
    await pastRun(f, { action: 'import', status: 'failed', seconds: 900, hoursAgo: 2.5 }) // failed: left out
    await pastRun(f, { action: 'import', status: 'success', seconds: 12, hoursAgo: 2 })
    await pastRun(f, { action: 'all', status: 'success', seconds: 7, hoursAgo: 1.5 }) // another action
    await pastRun(f, { action: 'import', status: 'success', seconds: 30.26, hoursAgo: 1 })

    // (10 + 20 + 3 + 12 + 30.26) / 5 = 15.052
    const imported = accepted(await f.process({ action: 'import' }))
    expect(imported.estimated_duration).toBe(15.1)
    expect((await f.waitFor(imported.process_id)).status).toBe('success')
    const all = accepted(await f.process({ action: 'all' }))
    expect(all.estimated_duration).toBe(7)
    expect((await f.waitFor(all.process_id)).status).toBe('success')
  })
})

describe('export actions', () => {
  it('export-all on a site without channels succeeds with an Info site error 2001 and imports nothing', async () => {
    const { f } = await readySite()
    const run = await f.run('export-all')
    expect(run.status, run.message).toBe('success')
    expect(run.message).toMatch(/Nothing to export: the site has no channel configured/)
    const errors = await errorsPage(f, `?pid=${run.pid}`)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ pid: run.pid, error: '2001', type: 'Info', classification: 'low', site_id: f.site.id })
    expect(JSON.parse(errors[0]?.data ?? 'null')).toEqual({ action: 'export-all', id: null })
    expect(await history(f)).toEqual([])
    expect((await f.stage()).rows).toEqual([])
  })

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['export', { id: 7 }, /no channel using export template 7/],
    ['channel', { id: '51395' }, /no channel 51395/],
  ])('%s of a channel the site does not have fails with site error 2004', async (action, extra, message) => {
    const { f } = await readySite()
    const run = await f.run(action, extra)
    expect(run.status).toBe('failed')
    expect(run.message).toMatch(message)
    const errors = await errorsPage(f, `?pid=${run.pid}`)
    expect(errors.map((e) => [e.error, e.type])).toEqual([['2004', 'Error']])
    expect(await history(f)).toEqual([])
  })

  it('all imports and then exports: import history, the stage and the Info error 2001', async () => {
    const { f } = await readySite()
    const run = await f.run('all')
    expect(run.status, run.message).toBe('success')
    expect(run.message).toMatch(/Imported 2 products/)
    expect(run.message).toMatch(/Nothing to export/)
    expect((await f.stage()).rows.map((row) => row.id)).toEqual(['A', 'B'])
    const errors = await errorsPage(f, `?pid=${run.pid}`)
    expect(errors.map((e) => [e.error, e.type, e.classification])).toEqual([['2001', 'Info', 'low']])
    expect((await history(f)).map((entry) => [entry.pid, entry.product_count])).toEqual([[run.pid, '2']])
  })
})

describe('site errors endpoint', () => {
  it('lists an error with every field in the documented shape', async () => {
    const { f } = await readySite()
    const run = await f.run('export-all')
    const [entry] = await errorsPage(f, `?pid=${run.pid}`)
    expect(entry).toEqual({
      id: expect.stringMatching(/^[1-9]\d*$/),
      pid: run.pid,
      error: '2001',
      data: expect.any(String),
      site_id: f.site.id,
      message: expect.stringMatching(/Nothing to export/),
      datetime: expect.stringMatching(TIMESTAMP),
      type: 'Info',
      classification: 'low',
      links: expect.any(Array),
    })
    expect(JSON.parse(entry?.data ?? '')).toEqual({ action: 'export-all', id: null })
    for (const link of entry?.links ?? []) {
      expect(Object.keys(link)).toHaveLength(1)
      expect(Object.values(link)[0]).toMatch(/^http:\/\/localhost:80\/platform\/v2\//)
    }
  })

  it('defaults to the latest run of the site; pid selects another; a site without runs has none', async () => {
    const { f } = await readySite()
    expect(await errorsPage(f, '')).toEqual([])
    const older = await f.run('export-all')
    const newer = await f.run('channel', { id: 12 })
    const latest = await errorsPage(f, '')
    expect(latest.map((e) => [e.pid, e.error])).toEqual([[newer.pid, '2004']])
    expect(latest[0]?.message).toMatch(/channel 12/)
    expect(await errorsPage(f, `?pid=${newer.pid}`)).toEqual(latest)
    expect((await errorsPage(f, `?pid=${older.pid}`)).map((e) => e.pid)).toEqual([older.pid])
    expect(await errorsPage(f, '?pid=')).toEqual(latest)
    // A run without site errors: the default follows it and lists nothing.
    const clean = await f.run('import')
    expect(clean.status).toBe('success')
    expect(await errorsPage(f, '')).toEqual([])
    expect(await errorsPage(f, `?pid=${randomUUID()}`)).toEqual([])
  })

  it('pages with limit and offset until a page is shorter than limit', async () => {
    const { f } = await readySite()
    const gone = await f.createStream()
    for (let i = 0; i < 3; i++) await f.attach(gone, { import_type: 2, description: `extra ${i}` })
    const removal = await t.request({ method: 'DELETE', url: `/streams/${gone}`, headers: f.account.bearer })
    expect(removal.statusCode, removal.body).toBe(204)
    const run = await f.run('all')
    expect(run.status, run.message).toBe('success')

    const all = await errorsPage(f, `?pid=${run.pid}`)
    expect(all.map((e) => e.error)).toEqual(['1005', '1005', '1005', '2001'])
    expect(all.map((e) => [e.type, e.classification])).toEqual([
      ['Warning', 'medium'],
      ['Warning', 'medium'],
      ['Warning', 'medium'],
      ['Info', 'low'],
    ])
    expect(new Set(all.map((e) => e.id)).size).toBe(4)

    for (const limit of [1, 2, 3, 4, 1000]) {
      const seen: ErrorEntry[] = []
      for (let offset = 0, pages = 0; pages < 10; pages++) {
        const page = await errorsPage(f, `?pid=${run.pid}&limit=${limit}&offset=${offset}`)
        expect(page.length).toBeLessThanOrEqual(limit)
        seen.push(...page)
        if (page.length < limit) break
        offset += limit
      }
      expect(seen, `limit ${limit}`).toEqual(all)
    }
    // The default pid works with paging too.
    expect(await errorsPage(f, '?limit=2&offset=2')).toEqual(all.slice(2))
    expect(await errorsPage(f, '?offset=4')).toEqual([])
    expect(await errorsPage(f, '?offset=100')).toEqual([])
  })

  it.each<[string, RegExp]>([
    ['limit=0', /limit/],
    ['limit=1001', /limit/],
    ['limit=-5', /limit/],
    ['limit=abc', /limit/],
    ['limit=1.5', /limit/],
    ['offset=-1', /offset/],
    ['offset=abc', /offset/],
    ['limit=10&offset=-3', /offset/],
  ])('answers 400 naming the parameter for %s', async (query, message) => {
    const f = await importFixture(t)
    expectError(await f.platform('GET', `/sites/${f.site.id}/errors?${query}`), 400, message)
  })

  it('accepts the bounds of limit and offset', async () => {
    const f = await importFixture(t)
    expect(await errorsPage(f, '?limit=1&offset=0')).toEqual([])
    expect(await errorsPage(f, '?limit=1000&offset=0')).toEqual([])
  })
})

describe('import history', () => {
  it('lists each import, newest first, with product counts as strings and timestamps', async () => {
    const { f, stream } = await readySite()
    const first = await f.run('import')
    expect(first.status, first.message).toBe('success')
    expect((await f.upload(stream, [{ id: 'C', title: 'Hat' }])).statusCode).toBe(202)
    const second = await f.run('import')
    expect(second.status, second.message).toBe('success')
    // Neither an export nor a failed run leaves an import history entry.
    expect((await f.run('export-all')).status).toBe('success')

    const entries = await history(f)
    expect(entries.map((entry) => [entry.pid, entry.product_count])).toEqual([
      [second.pid, '3'],
      [first.pid, '2'],
    ])
    for (const entry of entries) {
      expect(entry).toEqual({
        id: expect.stringMatching(/^[1-9]\d*$/),
        site_id: Number(f.site.id),
        import_time: expect.stringMatching(TIMESTAMP),
        import_time_utc: expect.stringMatching(TIMESTAMP),
        product_count: expect.any(String),
        pid: expect.stringMatching(UUID),
        links: expect.any(Array),
      })
      expect(Number.isInteger(entry.site_id)).toBe(true)
    }
    expect(Number(entries[0]?.id)).toBeGreaterThan(Number(entries[1]?.id))
    expect((entries[0]?.import_time ?? '') >= (entries[1]?.import_time ?? '')).toBe(true)
  })

  it('is empty for a site that never imported, and a failed import adds nothing', async () => {
    const f = await importFixture(t)
    expect(await history(f)).toEqual([])
    expect((await f.run('import')).status).toBe('failed')
    expect(await history(f)).toEqual([])
  })
})
