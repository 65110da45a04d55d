import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { createDb } from '../src/db/database.js'
import { startEmbeddedCluster, type EmbeddedCluster } from '../src/db/embedded.js'
import { migrateToLatest } from '../src/db/migrate.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Connection string of a database from which test databases are created (CREATE DATABASE needs one). */
    adminUrl: string
    templateDatabase: string
  }
}

interface TestDatabases {
  adminUrl: string
  templateDatabase: string
  /** Projects of this run that have not torn down yet. */
  users: number
  remove(): Promise<void>
}

// One cluster and one template for the whole run, whichever project's setup comes first: vitest runs
// this setup once per project (vitest.config.ts has three), and a cluster for each cost an initdb and a
// migration per project before the first test.
const SHARED = Symbol.for('catalog-platform.test-databases')
const shared = globalThis as typeof globalThis & { [SHARED]?: Promise<TestDatabases> }

export default async function setup(project: TestProject) {
  // The build and the cluster's start and migration side by side: each is mostly one core's work.
  const built = project.name === 'processes' ? buildCli() : undefined
  shared[SHARED] ??= prepareDatabases()
  const [databases] = await Promise.all([shared[SHARED], built])
  databases.users++
  project.provide('adminUrl', databases.adminUrl)
  project.provide('templateDatabase', databases.templateDatabase)
  return async () => {
    if (--databases.users > 0) return
    delete shared[SHARED]
    await databases.remove()
  }
}

// TEST_DATABASE_URL when set (a real Postgres, e.g. in a container); otherwise a disposable embedded
// cluster in a temp dir. Either way the schema is migrated once into a template database that every
// test file clones.
async function prepareDatabases(): Promise<TestDatabases> {
  let cluster: EmbeddedCluster | undefined
  let dataDir: string | undefined
  let adminUrl = process.env.TEST_DATABASE_URL
  if (!adminUrl) {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'catalog-test-'))
    try {
      // Test files of every project run side by side (vitest.config.ts) on this one cluster, each with
      // its app's pool and child servers with theirs: 400 connections for each project's cluster before.
      cluster = await startEmbeddedCluster(dataDir, { disposable: true, settings: { max_connections: '1000' } })
    } catch (error) {
      await fs.rm(dataDir, { recursive: true, force: true })
      throw error
    }
    adminUrl = cluster.urlFor('postgres')
  }
  const templateDatabase = `catalog_template_${process.pid}`
  await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${templateDatabase}`)
  await adminQuery(adminUrl, `CREATE DATABASE ${templateDatabase}`)
  const template = createDb(withDatabase(adminUrl, templateDatabase), 2)
  try {
    await migrateToLatest(template)
  } finally {
    await template.destroy()
  }
  const admin = adminUrl
  return { adminUrl, templateDatabase, users: 0, remove: () => removeDatabases({ adminUrl: admin, templateDatabase, cluster, dataDir }) }
}

/**
 * The files that start servers and CLI commands run the built CLI (test/helpers/child-server.ts
 * `mainArgs`), so it is built first: incremental, about 3 s when nothing changed.
 */
async function buildCli(): Promise<void> {
  const repoRoot = fileURLToPath(new URL('..', import.meta.url))
  const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc')
  try {
    await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: repoRoot })
  } catch (error) {
    // tsc prints its errors on stdout.
    const { stdout = '' } = error as { stdout?: string }
    throw new Error(`the build failed:\n${stdout}`)
  }
}

/** Drops every database of this run, then stops and removes the embedded cluster, if it started one. */
async function removeDatabases(run: { adminUrl: string; templateDatabase: string; cluster?: EmbeddedCluster; dataDir?: string }): Promise<void> {
  const { adminUrl, templateDatabase, cluster, dataDir } = run
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    const { rows } = await client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname = $2`, [
      `catalog_test_${process.pid}_%`,
      templateDatabase,
    ])
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(datname)} WITH (FORCE)`)
  } finally {
    await client.end()
  }
  await cluster?.stop({ force: true })
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true })
  // Kept outside the temp dir when the postgres user cannot enter it (a private TMPDIR, run as root).
  const clusterHome = cluster && path.dirname(cluster.directory)
  if (clusterHome && clusterHome !== dataDir) await fs.rm(clusterHome, { recursive: true, force: true })
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

async function adminQuery(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}
