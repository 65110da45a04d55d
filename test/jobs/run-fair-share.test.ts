import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { client } from '../helpers/clients.js'

// Run slots are shared fairly across accounts (issue 10, finding 4): with RUN_ACCOUNT_CONCURRENCY 1,
// an account's runs beyond the first wait without a job, so another account's run takes the free
// slot even while the first account's run is stuck.

const t = useTestApp({ RUN_CONCURRENCY: '2', RUN_POLL_SECONDS: '0.5', RUN_ACCOUNT_CONCURRENCY: '1' })

async function siteWithRows(f: ImportFixture): Promise<string> {
  const stream = await f.createStream()
  await f.attach(stream)
  expect((await f.upload(stream, [{ id: 'A', title: 'Shirt' }])).statusCode).toBe(202)
  return stream
}

/** Holds the stream rows' locks: an import of these streams waits at its first statement. */
async function holdStreams(streamIds: string[]): Promise<pg.Client> {
  const holder = new pg.Client({ connectionString: t.database.url })
  await holder.connect()
  await holder.query('BEGIN')
  await holder.query('SELECT id FROM stream WHERE id = ANY($1::bigint[]) FOR UPDATE', [streamIds])
  return holder
}

async function queued(f: ImportFixture): Promise<{ pid: string; message: string }> {
  const response = await f.process({ action: 'import' })
  expect(response.statusCode, response.body).toBe(200)
  const body = response.json<{ process_id: string; message: string }>()
  return { pid: body.process_id, message: body.message }
}

describe('runs of several accounts', () => {
  it("let another account's import run while one account's runs are stuck", async () => {
    const busy = await client(t, 'busy account')
    const sites = [await importFixture(t, {}, busy), await importFixture(t, {}, busy), await importFixture(t, {}, busy)]
    const streams = []
    for (const site of sites) streams.push(await siteWithRows(site))
    const other = await importFixture(t)
    await siteWithRows(other)

    const holder = await holdStreams(streams)
    try {
      const runs = []
      for (const site of sites) runs.push(await queued(site))
      expect(runs[0]?.message).toBe('Run queued')
      expect(runs[1]?.message).toMatch(/account's other runs/)
      expect(runs[2]?.message).toMatch(/account's other runs/)
      await sites[0]?.waitFor(runs[0]?.pid ?? '', ['running'])

      const otherRun = await other.run('import')
      expect(otherRun.status, otherRun.message).toBe('success')
      // Meanwhile the busy account still has one run stuck and two waiting for their turn.
      expect((await sites[0]?.waitFor(runs[0]?.pid ?? '', ['running', 'success', 'failed']))?.status).toBe('running')
      expect((await sites[1]?.waitFor(runs[1]?.pid ?? '', ['queued', 'running', 'success', 'failed']))?.status).toBe('queued')
      expect((await sites[2]?.waitFor(runs[2]?.pid ?? '', ['queued', 'running', 'success', 'failed']))?.status).toBe('queued')
    } finally {
      await holder.query('ROLLBACK')
      await holder.end()
    }
    // Once the first ends, the account's turn passes on: every waiting run gets to run.
    for (const [i, site] of sites.entries()) {
      const pid = (await t.db.selectFrom('run').select('pid').where('site_id', '=', site.site.id).executeTakeFirstOrThrow()).pid
      expect((await site.waitFor(pid)).status, `run of site ${i + 1}`).toBe('success')
    }
  })
})
