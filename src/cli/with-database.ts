import { userInfo } from 'node:os'
import { withRequestScope, type Actor } from '../activity/request-scope.js'
import { loadConfig } from '../config.js'
import { connect } from '../db/connect.js'
import type { Db } from '../db/database.js'
import { migrateToLatest } from '../db/migrate.js'

/**
 * Runs an operator command against the configured database: the server's one when it is running
 * on the same DATA_DIR (the embedded cluster is shared), or an embedded cluster started for the
 * command and stopped after it. Diagnostics go to stderr so that --json output stays clean. The
 * changes it makes are the CLI's in the activity log, with the user that ran it.
 */
export async function withDatabase<T>(work: (db: Db) => Promise<T>): Promise<T> {
  const config = loadConfig()
  const connection = await connect(config, (line) => process.stderr.write(`${line}\n`))
  try {
    await migrateToLatest(connection.db)
    return await withRequestScope({ actor: cliActor(), request: null }, () => work(connection.db))
  } finally {
    await connection.close()
  }
}

function cliActor(): Actor {
  let user = 'unknown'
  try {
    user = userInfo().username
  } catch {
    // No user name on this system (a container without an entry in /etc/passwd).
  }
  return { type: 'cli', id: user, label: `cli (${user})` }
}
