import { Migrator, type Kysely, type MigrationProvider } from 'kysely'
import { migrations } from '../../migrations/index.js'

const provider: MigrationProvider = { getMigrations: async () => migrations }

/** Applies every pending migration; throws with the failing migration's name. */
export async function migrateToLatest<T>(db: Kysely<T>): Promise<string[]> {
  // Migrations are written against Kysely<unknown>: they must not depend on today's table types.
  const migrator = new Migrator({ db: db as unknown as Kysely<unknown>, provider })
  const { error, results } = await migrator.migrateToLatest()
  const failed = results?.find((r) => r.status === 'Error')
  if (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${reason}`)
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
