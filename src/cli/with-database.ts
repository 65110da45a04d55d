import { loadConfig } from '../config.js'
import { connect } from '../db/connect.js'
import type { Db } from '../db/database.js'
import { migrateToLatest } from '../db/migrate.js'

/**
 * Runs an operator command against the configured database: the server's one when it is running
 * on the same DATA_DIR (the embedded cluster is shared), or an embedded cluster started for the
 * command and stopped after it. Diagnostics go to stderr so that --json output stays clean.
 */
export async function withDatabase<T>(work: (db: Db) => Promise<T>): Promise<T> {
  const config = loadConfig()
  const connection = await connect(config, (line) => process.stderr.write(`${line}\n`))
  try {
    await migrateToLatest(connection.db)
    return await work(connection.db)
  } finally {
    await connection.close()
  }
}
