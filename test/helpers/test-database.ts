import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { inject } from 'vitest'
import { createDb, type Db } from '../../src/db/database.js'
import { withDatabase } from '../global-setup.js'

export interface TestDatabase {
  db: Db
  url: string
  drop(): Promise<void>
}

/** A fresh, migrated database of its own (a clone of the template), for one test file. */
export async function createTestDatabase({ poolSize = 5 }: { poolSize?: number } = {}): Promise<TestDatabase> {
  const adminUrl = inject('adminUrl')
  const name = `catalog_test_${process.ppid}_${randomBytes(6).toString('hex')}`
  await withAdmin(adminUrl, (client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`))
  const url = withDatabase(adminUrl, name)
  const db = createDb(url, poolSize)
  return {
    db,
    url,
    drop: async () => {
      await db.destroy()
      await withAdmin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    },
  }
}

async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}
