import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'

export const run = promisify(execFile)

/** The database superuser, and the system user that runs the embedded Postgres when we are root. */
export const SUPERUSER = 'postgres'

/**
 * The embedded Postgres cannot start here, for a reason the operator can fix; the message says how.
 * The CLI prints the message alone, without a stack trace.
 */
export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError'
}

/** The user (and working directory) the Postgres binaries run as; empty when not root. */
export interface RunAs {
  uid?: number
  gid?: number
  cwd?: string
}

export const HOW_TO_AVOID = 'run as a user other than root, or set DATABASE_URL to a Postgres of your own'

// Postgres refuses to run as root (CI and containers often are): run it as the `postgres` user.
export async function postgresRunAs(): Promise<RunAs> {
  if (process.getuid?.() !== 0) return {}
  const lookup = async () => {
    const { stdout: uid } = await run('id', ['-u', SUPERUSER])
    const { stdout: gid } = await run('id', ['-g', SUPERUSER])
    // The working directory is inherited: ours may be a private checkout the user cannot enter.
    return { uid: Number(uid.trim()), gid: Number(gid.trim()), cwd: '/' }
  }
  try {
    return await lookup()
  } catch {
    try {
      await run('useradd', ['--system', '--user-group', '--no-create-home', SUPERUSER])
    } catch (error) {
      throw new EmbeddedPostgresError(
        `Postgres refuses to run as root, so the embedded Postgres runs as the user "${SUPERUSER}", which does not exist and could not be created ` +
          `with useradd (${reason(error)}); create it (e.g. useradd --system --user-group ${SUPERUSER}), ${HOW_TO_AVOID}`,
      )
    }
    return lookup()
  }
}

/** Whether `runAs` can enter the directory: every directory on the way must let it through. */
export async function canEnter(runAs: RunAs, dir: string): Promise<boolean> {
  // access(2) as that user, which also honours ACLs and groups that mode bits alone do not show.
  return run('sh', ['-c', 'test -d "$1" && test -x "$1"', 'sh', dir], runAs).then(
    () => true,
    () => false,
  )
}

/** The outermost directory on the way to `target` that `runAs` cannot enter, for messages. */
export async function closedAncestor(runAs: RunAs, target: string): Promise<string | undefined> {
  const resolved = path.resolve(target)
  const ancestors: string[] = []
  for (let dir = resolved; ; dir = path.dirname(dir)) {
    ancestors.unshift(dir)
    if (path.dirname(dir) === dir) break
  }
  for (const dir of ancestors) {
    if (!(await canEnter(runAs, dir))) return dir
  }
  return undefined
}

/** "the postgres user cannot enter /root" (or a vaguer text when no directory on the way is to blame). */
export async function whyUnreachable(runAs: RunAs, target: string): Promise<string> {
  const closed = await closedAncestor(runAs, target)
  return closed === undefined ? `the ${SUPERUSER} user may not use ${target}` : `the ${SUPERUSER} user cannot enter ${closed}`
}

/** One line on why a step failed: a command's own complaint, or the error's first line. */
export function reason(error: unknown): string {
  const stderr = typeof error === 'object' && error !== null && 'stderr' in error && typeof error.stderr === 'string' ? error.stderr.trim() : ''
  const text = stderr || (error instanceof Error ? error.message : String(error))
  return text.split('\n')[0] ?? text
}
