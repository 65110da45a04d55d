import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type pg from 'pg'
import { QUERY_CANCELED, poolOf } from '../../src/db/database.js'
import { inTransaction, sendWithCommit, withReadSnapshot } from '../../src/db/transaction.js'
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js'

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
  await sql`CREATE TABLE tx_probe (id int PRIMARY KEY, note text NOT NULL)`.execute(database.db)
})
afterAll(() => database.drop())

const notes = async () => (await sql<{ note: string }>`SELECT note FROM tx_probe ORDER BY id`.execute(database.db)).rows.map((row) => row.note)

describe('inTransaction', () => {
  it('gives Kysely and the raw client one connection, commits both, then runs the commit hooks in order', async () => {
    const ran: string[] = []
    await inTransaction(database.db, async (tx) => {
      await sql`INSERT INTO tx_probe VALUES (1, 'kysely')`.execute(tx.db)
      // The raw client sees the Kysely write before the commit: the same session.
      const { rows } = await tx.client.query<{ n: string }>('SELECT count(*) AS n FROM tx_probe')
      expect(rows[0]?.n).toBe('1')
      await tx.client.query("INSERT INTO tx_probe VALUES (2, 'raw')")
      tx.onCommit(() => {
        ran.push('first')
      })
      tx.onCommit(async () => {
        ran.push(`second saw ${(await notes()).length}`)
      })
      expect(ran).toEqual([])
    })
    expect(await notes()).toEqual(['kysely', 'raw'])
    expect(ran).toEqual(['first', 'second saw 2'])
  })

  it('rolls back every write of a failed transaction and never runs its hooks', async () => {
    let hookRan = false
    await expect(
      inTransaction(database.db, async (tx) => {
        await sql`INSERT INTO tx_probe VALUES (3, 'lost')`.execute(tx.db)
        await tx.client.query("INSERT INTO tx_probe VALUES (4, 'lost too')")
        tx.onCommit(() => {
          hookRan = true
        })
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect(await notes()).toEqual(['kysely', 'raw'])
    expect(hookRan).toBe(false)
  })

  it('keeps the commit when a hook fails, and reports the hook error', async () => {
    const reported: unknown[] = []
    const result = await inTransaction(
      database.db,
      async (tx) => {
        await sql`INSERT INTO tx_probe VALUES (5, 'kept')`.execute(tx.db)
        tx.onCommit(() => {
          throw new Error('hook failed')
        })
        return 'done'
      },
      { onHookError: (error) => reported.push(error) },
    )
    expect(result).toBe('done')
    expect(await notes()).toEqual(['kysely', 'raw', 'kept'])
    expect(reported).toHaveLength(1)
  })

  it('reads one snapshot throughout when asked for repeatable read', async () => {
    const seen = await inTransaction(
      database.db,
      async (tx) => {
        const count = async () => (await sql<{ n: string }>`SELECT count(*) AS n FROM tx_probe`.execute(tx.db)).rows[0]?.n
        const before = await count()
        // Committed by another connection meanwhile: invisible to this snapshot.
        await sql`INSERT INTO tx_probe VALUES (7, 'outside')`.execute(database.db)
        return [before, await count()]
      },
      { isolation: 'repeatable read' },
    )
    expect(seen[0]).toBe(seen[1])
    await sql`DELETE FROM tx_probe WHERE id = 7`.execute(database.db)
  })

  it('refuses a nested transaction on the handle instead of committing the outer one early', async () => {
    await expect(inTransaction(database.db, async (tx) => tx.db.transaction().execute(async () => 'nested'))).rejects.toThrow()
    // The pool still works afterwards: the client went back clean.
    await inTransaction(database.db, async (tx) => {
      await sql`INSERT INTO tx_probe VALUES (6, 'after')`.execute(tx.db)
    })
    expect((await notes()).at(-1)).toBe('after')
  })

  it('rolls back when the work asks for it, and still returns what the work returned', async () => {
    let hookRan = false
    const result = await inTransaction(database.db, async (tx) => {
      await sql`INSERT INTO tx_probe VALUES (8, 'not kept')`.execute(tx.db)
      tx.onCommit(() => {
        hookRan = true
      })
      tx.rollbackOnly()
      return 'empty'
    })
    expect(result).toBe('empty')
    expect(await notes()).not.toContain('not kept')
    expect(hookRan).toBe(false)
  })
})

describe('withReadSnapshot', () => {
  /** The messages the transaction's client sends while `work` runs. */
  async function messagesOf(work: () => Promise<unknown>): Promise<string[]> {
    const pool = poolOf(database.db)
    const sent: string[] = []
    const originals = new Map<pg.PoolClient, pg.PoolClient['query']>()
    const onAcquire = (client: pg.PoolClient) => {
      const query = client.query
      originals.set(client, query)
      client.query = ((text: string | { text: string }, ...rest: unknown[]) => {
        sent.push(typeof text === 'string' ? text : text.text)
        return (query as (...args: unknown[]) => unknown).call(client, text, ...rest)
      }) as pg.PoolClient['query']
    }
    pool.on('acquire', onAcquire)
    try {
      await work()
    } finally {
      pool.off('acquire', onAcquire)
      for (const [client, query] of originals) client.query = query
    }
    return sent
  }

  it('begins a read-only repeatable-read snapshot and its statement timeout in one message', async () => {
    const sent = await messagesOf(() =>
      withReadSnapshot(database.db, 5000, async (handle) => {
        const settings = await sql<{ isolation: string; readOnly: string; timeout: string }>`
          SELECT current_setting('transaction_isolation') AS isolation, current_setting('transaction_read_only') AS "readOnly",
                 current_setting('statement_timeout') AS timeout`.execute(handle)
        expect(settings.rows[0]).toEqual({ isolation: 'repeatable read', readOnly: 'on', timeout: '5s' })
      }),
    )
    expect(sent).toHaveLength(3)
    expect(sent[0]).toMatch(/^START TRANSACTION ISOLATION LEVEL repeatable read READ ONLY; SET LOCAL statement_timeout = 5000$/)
    expect(sent[2]).toBe('commit')
  })

  it('has Postgres cancel a statement past the timeout, and refuses writes', async () => {
    const slow = withReadSnapshot(database.db, 50, (handle) => sql`SELECT pg_sleep(5)`.execute(handle))
    await expect(slow).rejects.toMatchObject({ code: QUERY_CANCELED })
    const write = withReadSnapshot(database.db, 5000, (handle) => sql`INSERT INTO tx_probe VALUES (9, 'refused')`.execute(handle))
    // read_only_sql_transaction
    await expect(write).rejects.toMatchObject({ code: '25006' })
    // The connections went back clean: the next transaction has Postgres' defaults.
    const timeout = await inTransaction(
      database.db,
      async (tx) => (await sql<{ t: string }>`SELECT current_setting('statement_timeout') AS t`.execute(tx.db)).rows[0]?.t,
    )
    expect(timeout).toBe('0')
  })
})

describe('sendWithCommit', () => {
  const insert = (id: number, note: string) => sql`INSERT INTO tx_probe VALUES (${id}, ${note})`.compile(database.db)

  it('sends its statements with the COMMIT, values as literals whatever they hold', async () => {
    const awkward = ["it's", 'back\\slash', '$1 and $2', 'naïve ✓ 😀', "'; DROP TABLE tx_probe; --"]
    await inTransaction(database.db, async (tx) => {
      for (const [i, note] of awkward.entries()) await sendWithCommit(tx.db, insert(100 + i, note))
      // Not sent yet: nothing in the transaction reads them back.
      const { rows } = await tx.client.query<{ n: string }>('SELECT count(*) AS n FROM tx_probe WHERE id >= 100')
      expect(rows[0]?.n).toBe('0')
    })
    const stored = await sql<{ note: string }>`SELECT note FROM tx_probe WHERE id >= 100 ORDER BY id`.execute(database.db)
    expect(stored.rows.map((row) => row.note)).toEqual(awkward)
  })

  it('rolls the whole transaction back when a statement sent with the COMMIT fails', async () => {
    await expect(
      inTransaction(database.db, async (tx) => {
        await sql`INSERT INTO tx_probe VALUES (200, 'the change')`.execute(tx.db)
        // The same key again: the COMMIT's message fails, and the change goes with it.
        await sendWithCommit(tx.db, insert(200, 'its record'))
      }),
    ).rejects.toThrow(/duplicate key/)
    expect((await sql<{ n: string }>`SELECT count(*) AS n FROM tx_probe WHERE id = 200`.execute(database.db)).rows[0]?.n).toBe('0')
    // The connection is usable afterwards: the pool hands out a clean one.
    await inTransaction(database.db, async (tx) => sendWithCommit(tx.db, insert(201, 'after')))
    expect((await sql<{ n: string }>`SELECT count(*) AS n FROM tx_probe WHERE id = 201`.execute(database.db)).rows[0]?.n).toBe('1')
  })

  it('runs at once outside a transaction', async () => {
    await sendWithCommit(database.db, insert(300, 'now'))
    expect((await sql<{ n: string }>`SELECT count(*) AS n FROM tx_probe WHERE id = 300`.execute(database.db)).rows[0]?.n).toBe('1')
  })
})
