// npm run bench:activity — see README "Benchmarks". What the activity log adds to a write: a site's
// title changed 400 times over HTTP on the real server (median and p95 latency), and in the same run
// the statements of that change in a transaction of their own, with the activity insert and without
// it, interleaved: the insert's share of the write.
import { sql } from 'kysely'
import { createAccount } from '../src/accounts/accounts.js'
import { inTransaction } from '../src/db/transaction.js'
import { withRequestScope } from '../src/activity/request-scope.js'
import { recordActivity } from '../src/activity/activity-store.js'
import { changesBetween } from '../src/activity/activity-changes.js'
import { benchDatabase, machineLine, median, percentile, startServerProcess, writeResult } from './support.js'

const WRITES = Number(process.env.BENCH_WRITES ?? 400)

const database = await benchDatabase()
// A benchmark's client is faster than PLATFORM_RATE_LIMIT allows one credential.
const server = await startServerProcess(database.url, { PLATFORM_RATE_LIMIT: '1000000' })
const account = await createAccount(database.db, 'bench')
const headers = { 'x-auth-token': account.credential.xAuthToken, 'content-type': 'application/json' }

async function call(method: string, path: string, body: object): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.baseUrl}/platform/v2${path}`, { method, headers, body: JSON.stringify(body) })
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
  return (await response.json()) as Record<string, unknown>
}

const project = ((await call('POST', '/projects', { name: 'Bench' })).Projects as { id: string }[])[0]!
const site = ((await call('POST', '/sites', { title: 'Bench 0', project_id: project.id })).Sites as { id: string }[])[0]!

// Over HTTP: each PUT reads the site, updates it and records its entry, in one transaction.
const latencies: number[] = []
for (let i = 1; i <= WRITES; i++) {
  const started = performance.now()
  await call('PUT', `/sites/${site.id}`, { title: `Bench ${i}` })
  latencies.push(performance.now() - started)
}

// The same change's statements, with and without the entry, interleaved.
const scope = { actor: { type: 'platform_credential' as const, id: 'bench', label: 'bench' }, request: null }
async function change(n: number, withEntry: boolean): Promise<number> {
  const started = performance.now()
  await inTransaction(database.db, async ({ db }) => {
    const before = await db.selectFrom('site').selectAll().where('id', '=', site.id).forUpdate().executeTakeFirstOrThrow()
    const after = await db
      .updateTable('site')
      .set({ title: `Direct ${n}` })
      .where('id', '=', site.id)
      .returningAll()
      .executeTakeFirstOrThrow()
    if (withEntry) {
      const target = { type: 'site', id: site.id, siteId: site.id }
      await withRequestScope(scope, () =>
        recordActivity(db, { accountId: account.accountId, action: 'site.updated', target, changes: changesBetween(before, after) }),
      )
    }
  })
  return performance.now() - started
}
const without: number[] = []
const withEntry: number[] = []
for (let i = 0; i < WRITES; i++) {
  without.push(await change(i, false))
  withEntry.push(await change(i, true))
}
const entries = await sql<{ n: string }>`SELECT count(*) AS n FROM activity`.execute(database.db)
await server.stop()
await database.close()

const ms = (value: number) => value.toFixed(2)
const insertMs = median(withEntry) - median(without)
const lines = [
  '# Activity log benchmark',
  '',
  `${new Date().toISOString().slice(0, 10)} · ${machineLine()} · ${WRITES} writes each`,
  '',
  '| what | median ms | p95 ms |',
  '|---|---:|---:|',
  `| PUT /platform/v2/sites/{id} (title) over HTTP, entry included | ${ms(median(latencies))} | ${ms(percentile(latencies, 0.95))} |`,
  `| the change's statements in one transaction, without the entry | ${ms(median(without))} | ${ms(percentile(without, 0.95))} |`,
  `| the same, with the activity entry | ${ms(median(withEntry))} | ${ms(percentile(withEntry, 0.95))} |`,
  '',
  `The entry adds ${ms(insertMs)} ms to a write at the median: ${((insertMs / median(latencies)) * 100).toFixed(1)} % of a PUT over HTTP ` +
    `(ratio with/without at the database: ${(median(withEntry) / median(without)).toFixed(2)}). ${entries.rows[0]?.n} entries written.`,
  '',
]
console.log(`\n${lines.join('\n')}`)
await writeResult('activity.md', lines.join('\n'))
