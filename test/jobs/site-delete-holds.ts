import { sql } from 'kysely'
import pg from 'pg'
import { expect, vi } from 'vitest'
import { client } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { NOT_FOUND } from '../helpers/responses.js'
import type { TestContext } from '../helpers/test-app.js'

// Holds and waits for the tests of deleting a site while its runs wait or run (issue 11, bug 3).

/** A stream (seeded) with one product (uploaded), attached to the site; returns the stream id. */
export async function withRows(f: ImportFixture): Promise<string> {
  const stream = await f.createStream()
  await f.attach(stream)
  expect((await f.upload(stream, [{ id: 'A', title: 'Shirt' }])).statusCode).toBe(202)
  return stream
}

/** Holds the streams' rows: an import of them waits at its first statement until release. */
export async function holdStreams(t: TestContext, streamIds: string[]): Promise<pg.Client> {
  const holder = new pg.Client({ connectionString: t.database.url })
  await holder.connect()
  await holder.query('BEGIN')
  await holder.query('SELECT id FROM stream WHERE id = ANY($1::bigint[]) FOR UPDATE', [streamIds])
  return holder
}

export async function release(holder: pg.Client): Promise<void> {
  await holder.query('ROLLBACK')
  await holder.end()
}

/** Holds a whole table: a run that writes to it waits there until release. */
export async function holdTable(t: TestContext, table: 'stage_product' | 'channel_export'): Promise<pg.Client> {
  const holder = new pg.Client({ connectionString: t.database.url })
  await holder.connect()
  await holder.query('BEGIN')
  await holder.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`)
  return holder
}

/**
 * Deletes the site while `holder` holds what its run waits for: the delete waits too, then both go
 * on once the holder is released (here, whatever happens). Asserts the delete's answer.
 */
export async function deleteWhileHeld(t: TestContext, f: ImportFixture, holder: pg.Client): Promise<void> {
  const deleting = f.platform('DELETE', `/sites/${f.site.id}`)
  try {
    await eventually(async () => ((await lockWaits(t, 'delete from "site"')) > 0 ? true : undefined), 'the delete to wait')
  } finally {
    await release(holder)
  }
  const deleted = await deleting
  expect(deleted.statusCode, deleted.body).toBe(200)
  expect(deleted.json()).toEqual({ success: true })
}

/**
 * A run of another account that holds the one run slot (held until release), and an account with a
 * site to delete and a next site, both with rows.
 */
export async function busySlotAndAccount(t: TestContext, accountName: string) {
  const busy = await importFixture(t)
  const busyStream = await withRows(busy)
  const c = await client(t, accountName)
  const doomed = await importFixture(t, {}, c)
  const next = await importFixture(t, {}, c)
  await withRows(doomed)
  await withRows(next)
  return { busy, doomed, next, holder: await holdStreams(t, [busyStream]) }
}

/** POST /process with action import; returns the pid and the message. */
export async function requestImport(f: ImportFixture): Promise<{ pid: string; message: string }> {
  const response = await f.process({ action: 'import' })
  expect(response.statusCode, response.body).toBe(200)
  const body = response.json<{ process_id: string; message: string }>()
  return { pid: body.process_id, message: body.message }
}

/** Whether the run was admitted (its site's and its account's turn came); false once it is gone. */
export async function isAdmitted(t: TestContext, pid: string): Promise<boolean> {
  const row = await t.db.selectFrom('run').select('admitted_at').where('pid', '=', pid).executeTakeFirst()
  return (row?.admitted_at ?? null) !== null
}

/**
 * Watches the run log from now: for a run, its lines in order, `started` for each attempt that
 * started and the result of each that ended (`site_deleted`, `success`, …).
 */
export function watchRunLog(t: TestContext): (pid: string) => string[] {
  const spies = (['info', 'warn', 'error'] as const).map((level) => vi.spyOn(t.app.log, level))
  return (pid) =>
    spies
      .flatMap((spy) => spy.mock.calls.map((call, i) => ({ call, order: spy.mock.invocationCallOrder[i] ?? 0 })))
      .sort((x, y) => x.order - y.order)
      .flatMap(({ call: [fields, message] }) => {
        const line = fields as { pid?: string; result?: string } | undefined
        if (line?.pid !== pid) return []
        if (message === 'run started') return ['started']
        return message === 'run ended' ? [line.result ?? ''] : []
      })
}

/** The attempts of run `pid` once the last has ended: one that stopped for its deleted site was not retried. */
export async function settledAttempts(log: (pid: string) => string[], pid: string): Promise<string[]> {
  return eventually(async () => {
    const lines = log(pid)
    return lines.length > 0 && lines.at(-1) !== 'started' ? lines : undefined
  }, `run ${pid} to end`)
}

/** DELETE answers 200 {"success":true}, and the site and its runs are gone from the interface. */
export async function expectDeleted(f: ImportFixture, pids: string[]): Promise<void> {
  for (const pid of pids) {
    const status = await f.platform('GET', `/sites/${f.site.id}/status/${pid}`)
    expect(status.statusCode, status.body).toBe(404)
    expect(status.json()).toEqual(NOT_FOUND)
  }
  expect((await f.platform('GET', `/sites/${f.site.id}`)).statusCode).toBe(404)
}

export async function deleteSite(f: ImportFixture): Promise<void> {
  const response = await f.platform('DELETE', `/sites/${f.site.id}`)
  expect(response.statusCode, response.body).toBe(200)
  expect(response.json()).toEqual({ success: true })
}

/** Rows a deleted site still has in the tables without a foreign key to it. */
export async function leftovers(t: TestContext, siteId: string): Promise<{ stage: number; runs: number; errors: number }> {
  const count = async (table: 'stage_product' | 'run' | 'site_error') =>
    Number(
      (
        await t.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .where('site_id', '=', siteId)
          .executeTakeFirstOrThrow()
      ).n,
    )
  return { stage: await count('stage_product'), runs: await count('run'), errors: await count('site_error') }
}

/** Statements of the test database waiting for a lock whose text mentions `text`. */
export async function lockWaits(t: TestContext, text: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT count(*) AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE ${`%${text}%`}`.execute(t.db)
  return Number(rows[0]?.n ?? 0)
}
