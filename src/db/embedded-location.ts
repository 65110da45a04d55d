import { existsSync } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { canEnter, EmbeddedPostgresError, HOW_TO_AVOID, reason, SUPERUSER, whyUnreachable, type RunAs } from './embedded-access.js'
import { openDirectory } from './embedded-binaries.js'

// Written into a relocated cluster's home: which DATA_DIR it belongs to, to find it once that is gone.
const OWNER_FILE = 'data-dir'

/**
 * The cluster's own directory, by a path the user that runs Postgres can follow: DATA_DIR/pg.
 * When root runs Postgres as the postgres user and DATA_DIR lies inside a directory that user cannot
 * enter (the default ./.data of a checkout in /root or a mktemp -d), the cluster is kept in
 * `sharedDir`/clusters instead and DATA_DIR/pg is a symlink to it. The data survives restarts there,
 * a second process with the same DATA_DIR (the CLI beside the server) finds the same cluster and its
 * postmaster.pid through the link, and the password file stays in DATA_DIR, for root only. We do
 * not open the way to DATA_DIR: that would change the permissions of the operator's own directories.
 */
export async function clusterDirectory(dataDir: string, runAs: RunAs, sharedDir: string, log?: (line: string) => void): Promise<string> {
  const link = path.join(dataDir, 'pg')
  if (runAs.uid === undefined) return link
  const found = await fs.lstat(link).catch(() => undefined)
  if (found?.isSymbolicLink()) return path.resolve(dataDir, await fs.readlink(link))
  // DATA_DIR itself is opened to the postgres user when the cluster is made: the way to it must be open.
  if (await canEnter(runAs, path.dirname(dataDir))) return link
  const why = await whyUnreachable(runAs, path.dirname(dataDir))
  if (found) {
    throw new EmbeddedPostgresError(
      `The embedded Postgres runs as the ${SUPERUSER} user (Postgres refuses to run as root), and ${why} to reach the cluster in ${link}. Move ` +
        `DATA_DIR to a directory other users can enter and set DATA_DIR to it, ${HOW_TO_AVOID}`,
    )
  }
  return relocate(dataDir, sharedDir, why, log)
}

async function relocate(dataDir: string, sharedDir: string, why: string, log?: (line: string) => void): Promise<string> {
  const link = path.join(dataDir, 'pg')
  const owner = await fs.realpath(dataDir)
  const clustersDir = path.join(sharedDir, 'clusters')
  let home: string
  try {
    await openDirectory(clustersDir)
    await removeOrphans(clustersDir, owner, link)
    home = await fs.mkdtemp(path.join(clustersDir, `${readableName(owner)}-`))
    await fs.chmod(home, 0o755)
  } catch (error) {
    throw new EmbeddedPostgresError(
      `The embedded Postgres runs as the ${SUPERUSER} user (Postgres refuses to run as root), and ${why} to reach DATA_DIR ${dataDir}; keeping the ` +
        `cluster in ${clustersDir} instead failed (${reason(error)}). Set DATA_DIR to a directory other users can enter, clone the project ` +
        `elsewhere, ${HOW_TO_AVOID}`,
    )
  }
  const target = path.join(home, 'pg')
  try {
    await fs.symlink(target, link)
  } catch (error) {
    await fs.rm(home, { recursive: true, force: true })
    // Another process linked its cluster a moment before us: share it.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return path.resolve(dataDir, await fs.readlink(link))
    throw error
  }
  // Only now: a home with this file was linked once, so without its link it is an orphan.
  await fs.writeFile(path.join(home, OWNER_FILE), `${owner}\n`)
  // A first start by an older version may have left a cluster it could not finish (owned by postgres).
  await fs.rm(path.join(dataDir, 'pg.init'), { recursive: true, force: true })
  log?.(`${why}, so the embedded Postgres cluster of ${dataDir} is kept in ${target} (linked from ${link})`)
  return target
}

/**
 * Clusters kept for this DATA_DIR whose link is gone: the operator removed DATA_DIR (and with it the
 * password) to start afresh, which must free the cluster too. One still running is left alone.
 */
async function removeOrphans(clustersDir: string, owner: string, link: string): Promise<void> {
  for (const name of await fs.readdir(clustersDir)) {
    // Another process linked a cluster for DATA_DIR meanwhile: ours will not be made.
    if (
      await fs.lstat(link).then(
        () => true,
        () => false,
      )
    )
      return
    const home = path.join(clustersDir, name)
    const ownedBy = await fs.readFile(path.join(home, OWNER_FILE), 'utf8').catch(() => undefined)
    if (ownedBy?.trim() !== owner || existsSync(path.join(home, 'pg', 'postmaster.pid'))) continue
    await fs.rm(home, { recursive: true, force: true })
  }
}

// "repo-.data" for /root/repo/.data: an operator listing the clusters sees whose each one is.
function readableName(dataDir: string): string {
  const name = `${path.basename(path.dirname(dataDir))}-${path.basename(dataDir)}`
  return (
    name
      .replace(/[^\w.-]+/g, '_')
      .replace(/^[.-]+/, '')
      .slice(0, 60) || 'data'
  )
}
