import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { mainArgs } from '../helpers/child-server.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { batchIdOf } from '../helpers/responses.js'
import { importFixture } from '../helpers/factories.js'
import { readBatch } from '../helpers/clients.js'

// What imports and site deletes leave for the hourly cleanup, run here through the CLI command that
// does the same (`catalog-platform cleanup`).

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

function cleanup(...args: string[]): string {
  const result = spawnSync(process.execPath, mainArgs('cleanup', ...args), {
    env: { ...process.env, DATABASE_URL: t.database.url, LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    timeout: 60_000,
  })
  expect(result.status, result.stderr).toBe(0)
  return result.stdout
}

const rowsOf = async (table: 'batch_row' | 'stage_product', column: 'batch_id' | 'site_id', id: string) =>
  Number(
    (
      await t.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .where(column, '=', id)
        .executeTakeFirstOrThrow()
    ).n,
  )

describe('cleanup', () => {
  it('releases the rows of a batch when its import applies it, and keeps those still pending', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    const applied = batchIdOf(await f.upload(stream, [{ id: 'A', title: 'a' }]))
    expect(await rowsOf('batch_row', 'batch_id', applied)).toBe(1)
    expect((await f.run()).status).toBe('success')
    const pending = batchIdOf(await f.upload(stream, [{ id: 'B', title: 'b' }]))

    // Released by the import's own transaction: nothing left for the cleanup, which keeps the pending batch's rows.
    expect(await rowsOf('batch_row', 'batch_id', applied)).toBe(0)
    expect(cleanup('--grace-minutes', '0')).toMatch(/released the rows of 0 batch/)
    expect(await rowsOf('batch_row', 'batch_id', pending)).toBe(1)
    // The batch itself stays readable, and the next import still finds the pending one.
    expect((await readBatch(t, f, stream, applied)).attributes.status).toBe('processed')
    expect((await f.run()).status).toBe('success')
    expect(await rowsOf('batch_row', 'batch_id', pending)).toBe(0)
    expect((await f.stage()).rows).toEqual([
      { id: 'A', title: 'a' },
      { id: 'B', title: 'b' },
    ])
  })

  it('releases the rows of batches applied before imports released them, after the grace', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    const applied = batchIdOf(await f.upload(stream, [{ id: 'A', title: 'a' }]))
    expect((await f.run()).status).toBe('success')
    // As an older version left it: applied, its rows still there.
    await t.db.insertInto('batch_row').values({ batch_id: applied, line_no: 1, account_id: f.account.accountId, product_id: 'A', data: '{"id":"A"}' }).execute()
    await t.db.updateTable('batch').set({ rows_released: false }).where('id', '=', applied).execute()

    expect(cleanup('--grace-minutes', '10')).toMatch(/released the rows of 0 batch/)
    expect(await rowsOf('batch_row', 'batch_id', applied)).toBe(1)
    expect(cleanup('--grace-minutes', '0')).toMatch(/released the rows of 1 batch/)
    expect(await rowsOf('batch_row', 'batch_id', applied)).toBe(0)
  })

  it('removes the stage rows of a deleted site', async () => {
    const f = await importFixture(t)
    const kept = await importFixture(t, {}, f.c)
    const stream = await f.createStream()
    await f.attach(stream)
    await kept.attach(stream)
    await f.upload(stream, [{ id: 'A', title: 'a' }])
    expect((await f.run()).status).toBe('success')
    expect((await kept.run()).status).toBe('success')
    expect((await f.platform('DELETE', `/sites/${f.site.id}`)).statusCode).toBe(200)
    expect(cleanup()).toMatch(/removed the stages of 1 deleted site/)
    expect(await rowsOf('stage_product', 'site_id', f.site.id)).toBe(0)
    expect(await rowsOf('stage_product', 'site_id', kept.site.id)).toBe(1)
  })
})
