import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { claimPushes, finishPush, type ClaimedPush } from '../../src/exports/channel-pushes.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { client, createChannel, history } from '../helpers/clients.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'

// How pushes are claimed, with no push worker in this process (PUSH_CONCURRENCY 0) so that the test
// plays the workers: the per-account cap across processes, the lease that hands a dead process's
// push to another, the fence that ignores the dead one if it comes back, and the shared run budget.
const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0', ALLOW_PRIVATE_DESTINATIONS: 'true', PUSH_CONCURRENCY: '0' })

const limits = { limit: 1, leaseSeconds: 60, accountConcurrency: 1, budgetSeconds: 300 }

/** One claim of one push, as a process with one free slot makes it. */
async function claimPush(claimLimits: typeof limits): Promise<ClaimedPush | undefined> {
  const claimed = await claimPushes(t.db, claimLimits)
  expect(claimed.length).toBeLessThanOrEqual(1)
  return claimed[0]
}

async function exported(f: ImportFixture, filenames: string[]): Promise<{ channelId: string; pid: string }> {
  const stream = await f.createStream()
  await f.attach(stream)
  await f.upload(stream, [{ id: 'A', title: 'Shirt' }])
  const channel = await createChannel(f, {
    filenames: filenames.map((filename) => ({ type: null, filename })),
    destinations: [{ type: 'http', url: 'http://127.0.0.1:9/in' }],
  })
  const run = await f.run('all')
  expect(run.status, run.message).toBe('success')
  return { channelId: channel.id, pid: run.pid }
}

describe('push claims', () => {
  it('keep an account to its cap, take back a dead claim, and share the run budget', async () => {
    const a = await importFixture(t, {}, await client(t, 'Account A'))
    const b = await importFixture(t, {}, await client(t, 'Account B'))
    const ofA = await exported(a, ['one.csv', 'two.csv'])
    const ofB = await exported(b, ['feed.csv'])

    const first = await claimPush(limits)
    expect(first).toMatchObject({ account_id: a.account.accountId, pid: ofA.pid, filename: 'one.csv', attempts: 1, status: 'pending' })
    expect(first?.locked_until).not.toBeNull()
    // Account A has its one push in flight: the next claim, by any process, serves account B.
    const second = await claimPush(limits)
    expect(second).toMatchObject({ account_id: b.account.accountId, pid: ofB.pid, filename: 'feed.csv' })
    expect(await claimPush(limits)).toBeUndefined()

    // The process holding A's push dies: once its lease ends, the push is taken again.
    await t.db
      .updateTable('channel_push')
      .set({ locked_until: sql<Date>`now() - interval '1 second'` })
      .where('id', '=', first?.id ?? '0')
      .execute()
    const again = await claimPush(limits)
    expect(again).toMatchObject({ id: first?.id, attempts: 2 })
    expect(again?.budget_ends_at).toEqual(first?.budget_ends_at)

    // The dead claim coming back changes nothing; the live one ends the push.
    if (!first || !again || !second) throw new Error('claims missing')
    await finishPush(t.db, first, 'failed', 'from a claim that was given up')
    expect(await a.errors(ofA.pid)).toEqual([])
    await finishPush(t.db, again, 'done', null)
    expect((await history(a, ofA.channelId))[0]).toMatchObject({ uploaded: '0' })

    // The run's second push shares the budget its first one started.
    const last = await claimPush(limits)
    expect(last).toMatchObject({ pid: ofA.pid, filename: 'two.csv', attempts: 1 })
    expect(last?.budget_ends_at).toEqual(first.budget_ends_at)
    if (!last) throw new Error('claim missing')
    await finishPush(t.db, last, 'done', null)
    expect((await history(a, ofA.channelId))[0]).toMatchObject({ uploaded: '1' })
    await finishPush(t.db, second, 'done', null)
    expect((await history(b, ofB.channelId))[0]).toMatchObject({ uploaded: '1' })
  })

  it('serve an account with nothing in flight before another account gets its second push, whatever their age', async () => {
    const a = await importFixture(t, {}, await client(t, 'Account A'))
    const b = await importFixture(t, {}, await client(t, 'Account B'))
    const ofA = await exported(a, ['one.csv', 'two.csv'])
    const ofB = await exported(b, ['feed.csv'])
    const two = { ...limits, accountConcurrency: 2 }
    const claimed = [await claimPush(two), await claimPush(two), await claimPush(two)]
    // A's second push is older than B's first, and A may have two in flight: B still comes first.
    expect(claimed.map((push) => [push?.pid, push?.filename])).toEqual([
      [ofA.pid, 'one.csv'],
      [ofB.pid, 'feed.csv'],
      [ofA.pid, 'two.csv'],
    ])
    for (const push of claimed) if (push) await finishPush(t.db, push, 'done', null)
  })

  it('take as many as the process has free slots in one statement, each account to its cap', async () => {
    const a = await importFixture(t, {}, await client(t, 'Account A'))
    const b = await importFixture(t, {}, await client(t, 'Account B'))
    const ofA = await exported(a, ['one.csv', 'two.csv', 'three.csv'])
    const ofB = await exported(b, ['feed.csv'])
    const claimed = await claimPushes(t.db, { ...limits, limit: 5, accountConcurrency: 2 })
    // A's third push waits: A has its two in flight.
    const byName = (push: ClaimedPush) => push.filename
    expect(claimed.map((push) => [push.pid, push.filename]).sort()).toEqual(
      [
        [ofA.pid, 'one.csv'],
        [ofA.pid, 'two.csv'],
        [ofB.pid, 'feed.csv'],
      ].sort(),
    )
    // The run's pushes claimed together share one budget.
    const ofRunA = claimed.filter((push) => push.pid === ofA.pid)
    expect(ofRunA.map(byName).sort()).toEqual(['one.csv', 'two.csv'])
    expect(ofRunA[0]?.budget_ends_at).toEqual(ofRunA[1]?.budget_ends_at)
    expect(await claimPushes(t.db, { ...limits, limit: 5, accountConcurrency: 2 })).toEqual([])
    for (const push of claimed) await finishPush(t.db, push, 'done', null)
    expect((await claimPushes(t.db, { ...limits, limit: 5, accountConcurrency: 2 })).map((push) => push.filename)).toEqual(['three.csv'])
  })
})
