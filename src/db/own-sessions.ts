import pg from 'pg'
import { PROCESS_APPLICATION_NAME } from './database.js'

/**
 * Ends every database session of this process, the statements they run and their open transactions
 * (rolled back): how a shutdown stops work that outlived its grace, such as a long export query,
 * which is retried elsewhere. Uses a connection of its own, since the pool may be full or ending.
 * Returns how many sessions were ended.
 */
export async function terminateOwnSessions(connectionString: string): Promise<number> {
  const client = new pg.Client({ connectionString, application_name: `${PROCESS_APPLICATION_NAME}/shutdown`, connectionTimeoutMillis: 5_000 })
  client.on('error', () => {})
  try {
    await client.connect()
    const { rows } = await client.query<{ ended: boolean }>(
      'SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
      [PROCESS_APPLICATION_NAME],
    )
    return rows.filter((row) => row.ended).length
  } finally {
    await client.end().catch(() => {})
  }
}
