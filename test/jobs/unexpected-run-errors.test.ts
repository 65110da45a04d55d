import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { importFixture } from '../helpers/factories.js'
import { useTestApp } from '../helpers/test-app.js'
import { withRows } from './site-delete-holds.js'

// A run that fails in a way nobody anticipated (here: the database refuses the import stage's
// rows of one site) is tried once more, then given up, failed with site error 9002; the site runs
// again once the cause is gone. One run slot; the stale-run sweep far beyond the test.
const t = useTestApp({ RUN_CONCURRENCY: '1', RUN_POLL_SECONDS: '0.5', RUN_HEARTBEAT_SECONDS: '600', SCHEDULER_INTERVAL_SECONDS: '0' })

/** Makes every write of the site's import stage fail with a database error until `undo`. */
async function breakStageOf(siteId: string): Promise<{ undo(): Promise<void> }> {
  const name = `break_stage_${siteId}`
  await sql
    .raw(
      `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'stage write refused by the test'; END $$;
       CREATE TRIGGER ${name} BEFORE INSERT OR UPDATE ON stage_product FOR EACH ROW WHEN (NEW.site_id = ${siteId}) EXECUTE FUNCTION ${name}();`,
    )
    .execute(t.db)
  return {
    undo: () =>
      sql
        .raw(`DROP TRIGGER ${name} ON stage_product; DROP FUNCTION ${name}();`)
        .execute(t.db)
        .then(() => {}),
  }
}

describe('a run that fails unexpectedly', () => {
  it('is tried once more, then given up with site error 9002, and the site runs again', async () => {
    const f = await importFixture(t)
    await withRows(f)
    const broken = await breakStageOf(f.site.id)
    let fixed = false
    try {
      const run = await f.run('import')
      expect(run.status).toBe('failed')
      expect(run.message).toMatch(/given up/)
      const attempts = await t.db.selectFrom('run').select('attempt').where('pid', '=', run.pid).executeTakeFirstOrThrow()
      expect(attempts.attempt).toBe(2)
      expect((await f.errors(run.pid)).map((error) => [error.error, error.type])).toEqual([['9002', 'Error']])
      await broken.undo()
      fixed = true
      const again = await f.run('import')
      expect(again.status, again.message).toBe('success')
      expect((await f.stage()).rows).toEqual([{ id: 'A', title: 'Shirt' }])
    } finally {
      if (!fixed) await broken.undo()
    }
  })
})
