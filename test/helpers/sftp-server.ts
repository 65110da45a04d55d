import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { accessSync, closeSync, constants, openSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import fs from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { freePort } from '../../src/db/free-port.js'
import { eventually } from './eventually.js'

// Real servers for the tests that push files to a destination (issue 34): OpenSSH's sshd here, vsftpd
// in ftps-server.ts, each run in the foreground on a loopback port with a generated configuration, never
// a mock of the protocol. They need root (a system user to log in as, sshd's chroot) and Debian's
// openssh-server and vsftpd, which .ci/run installs; without them the helpers throw and say what is
// missing. The parts both servers share (the test user, the process, its directory) are exported here.

const execFileAsync = promisify(execFile)

/**
 * Where the servers' directories live. sshd's ChrootDirectory must be owned by root and not group- or
 * world-writable, down to every component of its path, so not under /tmp (mode 1777): /run is root's
 * 0755, and a tmpfs emptied at boot on a real machine.
 */
export const SERVERS_BASE = '/run/catalogtest'
/** The system user both servers log in: created once per machine, kept (a user is cheap, useradd is not). */
export const TEST_USER = 'catalogtest'
/** Bound for a server to answer once started: generous, as a broken setup, not a slow machine, should reach it. */
const START_TIMEOUT_MS = 15_000
const START_ATTEMPTS = 3
const LOG_LIMIT = 256 * 1024

export interface TestUser {
  name: string
  uid: number
  gid: number
  password: string
}

/**
 * Throws when not root or when a program (or file) the server needs is missing, saying which: the tests
 * add a system user and start the server as root, and Debian's packages provide the rest.
 */
export function requireServerTools(server: string, programs: string[], files: string[] = []): void {
  const problems: string[] = []
  if (process.getuid?.() !== 0) problems.push(`not running as root (uid ${process.getuid?.()}), which adding the test user and starting ${server} need`)
  const missing = [...programs.filter((program) => !accessible(program, constants.X_OK)), ...files.filter((file) => !accessible(file, constants.R_OK))]
  if (missing.length > 0) problems.push(`missing ${missing.join(', ')} (apt-get install openssh-server vsftpd, as .ci/run does)`)
  if (problems.length > 0) throw new Error(`cannot start a real ${server} server for the tests: ${problems.join('; ')}`)
}

function accessible(file: string, mode: number): boolean {
  try {
    accessSync(file, mode)
    return true
  } catch {
    return false
  }
}

// Under flock, so that test files starting servers side by side agree: creates the user when missing,
// with /bin/sh as its shell (vsftpd's PAM stack, /etc/pam.d/vsftpd, ends with pam_shells, which refuses
// a shell that /etc/shells does not list, such as nologin) and SERVERS_BASE as its home (vsftpd changes
// into the home directory before local_root and ends the session when it is missing); keeps one random
// password per machine in a root-only file, and sets it with chpasswd when the file is new or the
// user's shadow entry changed since (someone else set another).
const PROVISION_SCRIPT = `
set -eu
user=$1 dir=$2
if ! getent passwd "$user" >/dev/null; then
  useradd --system --no-create-home --home-dir "$dir" --shell /bin/sh --comment 'catalog-platform test servers' "$user"
fi
[ "$(getent passwd "$user" | cut -d: -f6-7)" = "$dir:/bin/sh" ] || usermod --home "$dir" --shell /bin/sh "$user"
if [ ! -s "$dir/password" ]; then
  (umask 077 && printf '%s' "$CANDIDATE_PASSWORD" >"$dir/password.new")
  mv "$dir/password.new" "$dir/password"
  rm -f "$dir/password.hash"
fi
if [ "$(getent shadow "$user" | cut -d: -f2)" != "$(cat "$dir/password.hash" 2>/dev/null || true)" ]; then
  printf '%s:%s\\n' "$user" "$(cat "$dir/password")" | chpasswd
  (umask 077 && getent shadow "$user" | cut -d: -f2 >"$dir/password.hash")
fi
`

let testUser: Promise<TestUser> | undefined

/** The servers' login: the system user TEST_USER with this machine's password (made once per process). */
export function ensureTestUser(): Promise<TestUser> {
  testUser ??= provisionTestUser().catch((error: unknown) => {
    testUser = undefined
    throw error
  })
  return testUser
}

async function provisionTestUser(): Promise<TestUser> {
  await ensureBase()
  const env = { ...process.env, CANDIDATE_PASSWORD: randomBytes(18).toString('base64url') }
  const args = [path.join(SERVERS_BASE, '.lock'), 'sh', '-c', PROVISION_SCRIPT, 'provision', TEST_USER, SERVERS_BASE]
  try {
    await execFileAsync('flock', args, { env })
  } catch (error) {
    const { stderr } = error as { stderr?: string }
    throw new Error(`could not set up the test user ${TEST_USER}: ${(error as Error).message}\n${stderr ?? ''}`)
  }
  const [, , uid, gid] = (await execFileAsync('getent', ['passwd', TEST_USER])).stdout.trim().split(':')
  const password = await fs.readFile(path.join(SERVERS_BASE, 'password'), 'utf8')
  return { name: TEST_USER, uid: Number(uid), gid: Number(gid), password }
}

async function ensureBase(): Promise<void> {
  await fs.mkdir(SERVERS_BASE, { recursive: true })
  // Whatever made it: root's and 0755, as sshd's chroot rule wants of every component.
  await fs.chown(SERVERS_BASE, 0, 0)
  await fs.chmod(SERVERS_BASE, 0o755)
}

/** A new directory for one server (root's, 0755, so the test user can reach what it is given inside). */
export async function makeServerDir(kind: string): Promise<string> {
  await ensureBase()
  const dir = await fs.mkdtemp(path.join(SERVERS_BASE, `${kind}-`))
  await fs.chmod(dir, 0o755)
  return dir
}

/** Creates `root` (owned by `owner`) and the writable directories inside it, owned by the test user. */
export async function makeRoot(root: string, owner: { uid: number; gid: number }, user: TestUser, writableDirs: string[]): Promise<void> {
  await fs.mkdir(root, { mode: 0o755 })
  await fs.chown(root, owner.uid, owner.gid)
  for (const dir of writableDirs) {
    const full = path.join(root, dir)
    if (path.relative(root, full).startsWith('..')) throw new Error(`writable directory outside the root: ${dir}`)
    await fs.mkdir(full, { recursive: true, mode: 0o755 })
    await fs.chown(full, user.uid, user.gid)
  }
}

// ---------------------------------------------------------------------------------------------------
// The server process: started in the foreground, its output kept, killed with every process it forked
// (sshd's per-connection children call setsid, so a process group does not hold them).

export interface ProcessSpec {
  /** The server's name in errors ("sshd"). */
  name: string
  command: string
  args: string[]
  port: number
  /** What the server sends first on a new connection ("SSH-", "220"): it is serving once a probe reads it. */
  banner: string
  startTimeoutMs?: number
  /** A log file the server writes besides its output (vsftpd's), shown with it. */
  logFile?: string
  /**
   * A file for the server's standard input to write to: vsftpd writes its fatal errors ("500 OOPS: could
   * not bind…") to fd 0, its control connection when inetd starts it. Otherwise stdin is /dev/null.
   */
  stdinFile?: string
}

export class ServerProcess {
  readonly #spec: ProcessSpec
  readonly #child: ChildProcess
  readonly #exited: Promise<void>
  #output = ''
  #exit: string | undefined

  private constructor(spec: ProcessSpec) {
    this.#spec = spec
    const stdin = spec.stdinFile === undefined ? 'ignore' : openSync(spec.stdinFile, 'a')
    try {
      this.#child = spawn(spec.command, spec.args, { stdio: [stdin, 'pipe', 'pipe'] })
    } finally {
      if (typeof stdin === 'number') closeSync(stdin)
    }
    const keep = (chunk: string) => {
      this.#output += chunk
      if (this.#output.length > LOG_LIMIT) this.#output = this.#output.slice(-LOG_LIMIT / 2)
    }
    this.#child.stdout?.setEncoding('utf8').on('data', keep)
    this.#child.stderr?.setEncoding('utf8').on('data', keep)
    this.#exited = new Promise((resolve) => {
      this.#child.on('error', (error) => {
        this.#exit = `could not be spawned: ${error.message}`
        resolve()
      })
      this.#child.on('exit', (code, signal) => {
        this.#exit = `exited (code ${code}, signal ${signal})`
        resolve()
      })
    })
    if (this.#child.pid !== undefined) liveProcesses.add(this.#child.pid)
    void this.#exited.then(() => liveProcesses.delete(this.#child.pid ?? -1))
    registerExitCleanup()
  }

  /** Starts the server and waits until it answers on its port; kills it and throws with its log if it does not. */
  static async start(spec: ProcessSpec): Promise<ServerProcess> {
    const server = new ServerProcess(spec)
    try {
      await eventually(
        async () => {
          if (server.#exit) throw new Error(`${spec.name} ${server.#exit} before it answered on port ${spec.port}`)
          return probe(spec.port, spec.banner)
        },
        { what: `${spec.name} to answer on port ${spec.port}`, withinMs: spec.startTimeoutMs ?? START_TIMEOUT_MS },
      )
    } catch (error) {
      await server.kill()
      throw new Error(`${(error as Error).message}\n--- ${spec.name} log ---\n${server.log()}`, { cause: error })
    }
    return server
  }

  get spec(): ProcessSpec {
    return this.#spec
  }

  /** The server's output, and its log file if it has one. */
  log(): string {
    let log = this.#output
    for (const file of [this.#spec.stdinFile, this.#spec.logFile]) {
      let written = ''
      try {
        if (file) written = readFileSync(file, 'utf8').slice(-LOG_LIMIT)
      } catch {
        // not written yet
      }
      if (written) log += `\n--- ${file} ---\n${written}`
    }
    return log
  }

  /** Kills every process the server forked (its connections), leaving the listener; the number killed. */
  async dropConnections(): Promise<number> {
    const pid = this.#child.pid
    if (pid === undefined || this.#exit) return 0
    const sessions = descendants(pid)
    for (const session of sessions) signal(session, 'SIGKILL')
    await eventually(async () => sessions.every((session) => !isRunning(session)), { what: `${this.#spec.name}'s connections to end`, withinMs: 10_000 })
    return sessions.length
  }

  /** Kills the server and everything it forked; resolves once the server process has exited. */
  async kill(): Promise<void> {
    const pid = this.#child.pid
    if (pid !== undefined && !this.#exit) killTree(pid)
    await Promise.race([this.#exited, sleep(10_000)])
    if (!this.#exit) throw new Error(`${this.#spec.name} (pid ${pid}) did not exit after SIGKILL`)
  }
}

/**
 * Starts a server on a free loopback port, once more on another port when the first was taken between
 * the look and the bind (the log says "Address already in use" or "could not bind").
 */
export async function startOnFreePort(specFor: (port: number) => Promise<ProcessSpec>): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ServerProcess.start(await specFor(await freePort()))
    } catch (error) {
      const message = (error as Error).message
      if (attempt >= START_ATTEMPTS || !/address already in use|could not bind/i.test(message)) throw error
    }
  }
}

/** Connects, reads the server's first bytes and hangs up: true when they start with the banner. */
function probe(port: number, banner: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    let received = ''
    const done = (answered: boolean) => {
      socket.destroy()
      resolve(answered)
    }
    socket.setTimeout(2_000, () => done(false))
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      received += chunk
      if (received.length >= banner.length) done(received.startsWith(banner))
    })
    socket.on('error', () => done(false))
    socket.on('close', () => done(false))
  })
}

// Every server process this process started and has not seen exit: killed, with their children, if
// the test process ends without stopping them (a failed hook, a worker torn down).
const liveProcesses = new Set<number>()
const liveDirs = new Set<string>()
let exitCleanupRegistered = false

function registerExitCleanup(): void {
  if (exitCleanupRegistered) return
  exitCleanupRegistered = true
  process.once('exit', () => {
    for (const pid of liveProcesses) killTree(pid)
    for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true })
  })
}

/** Removes the directory when the test process exits, if stop() has not removed it by then. */
export function removeAtExit(dir: string): void {
  liveDirs.add(dir)
  registerExitCleanup()
}

export async function removeDir(dir: string): Promise<void> {
  liveDirs.delete(dir)
  await fs.rm(dir, { recursive: true, force: true })
}

function killTree(pid: number): void {
  // The listener first, so that it forks no new child while the others are killed.
  const tree = descendants(pid)
  signal(pid, 'SIGKILL')
  for (const child of tree) signal(child, 'SIGKILL')
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name)
  } catch {
    // already gone
  }
}

/** Every live process below `root` in the process tree, from /proc. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const stat = procStat(Number(entry))
    if (!stat || stat.state === 'Z') continue
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), Number(entry)])
  }
  const found: number[] = []
  const queue = [root]
  while (queue.length > 0) {
    for (const child of children.get(queue.shift() as number) ?? []) {
      found.push(child)
      queue.push(child)
    }
  }
  return found
}

function isRunning(pid: number): boolean {
  const stat = procStat(pid)
  return stat !== undefined && stat.state !== 'Z'
}

function procStat(pid: number): { state: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read from the last ")".
    const [state = '', ppid = ''] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { state, ppid: Number(ppid) }
  } catch {
    return undefined
  }
}

// ---------------------------------------------------------------------------------------------------
// The SFTP server.

export interface SftpServerOptions {
  /** Directories created inside the root, writable by the user (default ["upload"]); the root itself is not. */
  writableDirs?: string[]
  /** Passphrase of the second client key (default: a random one). */
  passphrase?: string
  /** Bound for sshd to answer after it starts (default 15 s). */
  startTimeoutMs?: number
}

export interface SftpServer {
  host: '127.0.0.1'
  port: number
  user: string
  password: string
  /** An ed25519 client key without passphrase, in OpenSSH's format; its public half is authorized. */
  privateKey: string
  /** A second client key (ECDSA P-256), encrypted with `passphrase`; also authorized. */
  passphraseKey: { privateKey: string; passphrase: string }
  /** The host key's fingerprint as `ssh-keygen -lf` prints it: `SHA256:` and unpadded base64. */
  hostKeySha256: string
  /** The fingerprints of its other host keys, which `ssh-keyscan` lists beside it and a client may pin as well. */
  otherHostKeysSha256: { ecdsa: string; rsa: string }
  /**
   * True when the key ssh2 hands a `hostVerifier` is this server's host key: the raw key (a Buffer, no
   * `hostHash` option) or its hex SHA-256 (`hostHash: 'sha256'`). Usable as `hostVerifier` itself.
   */
  verifyHostKey: (key: Buffer | string) => boolean
  /** The local directory that remote paths map to: remote `/upload/a.csv` is `path.join(root, 'upload/a.csv')`. */
  root: string
  /** sshd's output so far (it runs with -e, LogLevel VERBOSE). */
  log(): string
  /** Cuts every open connection (the processes sshd forked for them); the server keeps listening. */
  dropConnections(): Promise<number>
  /**
   * Takes the server down while `action` runs (open connections cut, new ones refused), then starts it
   * again on the same port with the same keys, user and files, and returns what `action` returned.
   */
  dropConnectionsDuring<T>(action: () => Promise<T>): Promise<T>
  /** Kills sshd and its connections and removes its directory (and so the uploaded files). */
  stop(): Promise<void>
}

/** How the platform interface is told to log in to `server` with its password: the fields an SFTP source or destination shares. */
export function sftpLogin(server: SftpServer) {
  return { type: 'sftp', host: server.host, port: server.port, user: server.user, password: server.password, host_key_sha256: server.hostKeySha256 }
}

/** The fingerprint of an SSH public key blob, as OpenSSH prints it: `SHA256:` and unpadded base64. */
export function sshFingerprint(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`
}

const SSHD = '/usr/sbin/sshd'
const SSH_KEYGEN = '/usr/bin/ssh-keygen'

/** Starts OpenSSH's sshd as an SFTP-only server for the test user, chrooted into a fresh directory. */
export async function startSftpServer(options: SftpServerOptions = {}): Promise<SftpServer> {
  requireServerTools('sshd', [SSHD, SSH_KEYGEN, '/usr/sbin/useradd', '/usr/sbin/chpasswd', '/usr/bin/flock'])
  const user = await ensureTestUser()
  // sshd's privilege separation directory: made by the package's service unit, which no one ran here.
  await fs.mkdir('/run/sshd', { recursive: true, mode: 0o755 })
  const dir = await makeServerDir('sftp')
  removeAtExit(dir)
  try {
    const root = path.join(dir, 'root')
    await makeRoot(root, { uid: 0, gid: 0 }, user, options.writableDirs ?? ['upload'])
    const passphrase = options.passphrase ?? randomBytes(12).toString('base64url')
    const [hostKeySha256, ecdsa, rsa, privateKey, passphraseKey] = await Promise.all([
      makeHostKey(dir, 'ed25519'),
      makeHostKey(dir, 'ecdsa', ['-b', '256']),
      makeHostKey(dir, 'rsa', ['-b', '2048']),
      makeClientKey(dir, 'client_ed25519', ['-t', 'ed25519'], ''),
      makeClientKey(dir, 'client_ecdsa', ['-t', 'ecdsa', '-b', '256'], passphrase),
    ])
    const authorized = [privateKey.publicKey, passphraseKey.publicKey].join('')
    await fs.writeFile(path.join(dir, 'authorized_keys'), authorized, { mode: 0o644 })
    const specFor = async (port: number): Promise<ProcessSpec> => {
      const config = path.join(dir, 'sshd_config')
      await fs.writeFile(config, sshdConfig(dir, root, port))
      return { name: 'sshd', command: SSHD, args: ['-D', '-e', '-f', config], port, banner: 'SSH-', startTimeoutMs: options.startTimeoutMs }
    }
    let sshd = await startOnFreePort(specFor)
    const hostKeyHex = Buffer.from(hostKeySha256.slice('SHA256:'.length), 'base64').toString('hex')
    return {
      host: '127.0.0.1',
      port: sshd.spec.port,
      user: user.name,
      password: user.password,
      privateKey: privateKey.privateKey,
      passphraseKey: { privateKey: passphraseKey.privateKey, passphrase },
      hostKeySha256,
      otherHostKeysSha256: { ecdsa, rsa },
      verifyHostKey: (key) => (typeof key === 'string' ? key.toLowerCase() === hostKeyHex : sshFingerprint(key) === hostKeySha256),
      root,
      log: () => sshd.log(),
      dropConnections: () => sshd.dropConnections(),
      async dropConnectionsDuring(action) {
        await sshd.kill()
        try {
          return await action()
        } finally {
          sshd = await ServerProcess.start(sshd.spec)
        }
      },
      async stop() {
        await sshd.kill()
        await removeDir(dir)
      },
    }
  } catch (error) {
    await removeDir(dir)
    throw error
  }
}

function sshdConfig(dir: string, root: string, port: number): string {
  return `# Generated by test/helpers/sftp-server.ts: an SFTP-only server for ${TEST_USER}.
ListenAddress 127.0.0.1:${port}
HostKey ${path.join(dir, 'ssh_host_ed25519_key')}
HostKey ${path.join(dir, 'ssh_host_ecdsa_key')}
HostKey ${path.join(dir, 'ssh_host_rsa_key')}
PidFile ${path.join(dir, 'sshd.pid')}
LogLevel VERBOSE
# sshd checks passwords against /etc/shadow itself: /etc/pam.d/sshd works too, but pam_unix pauses about
# 2 s after a wrong password, and the session modules (pam_loginuid) are a container's usual trouble.
UsePAM no
PasswordAuthentication yes
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}
PermitRootLogin no
AllowUsers ${TEST_USER}
Subsystem sftp internal-sftp
# -u: the sessions' umask, not whatever the test process passed down to sshd.
ForceCommand internal-sftp -u 022
ChrootDirectory ${root}
AllowTcpForwarding no
AllowAgentForwarding no
AllowStreamLocalForwarding no
X11Forwarding no
PermitTunnel no
PermitTTY no
PermitUserRC no
UseDNS no
PrintMotd no
MaxStartups 50
`
}

async function makeHostKey(dir: string, type: 'ed25519' | 'ecdsa' | 'rsa', bits: string[] = []): Promise<string> {
  const file = path.join(dir, `ssh_host_${type}_key`)
  await execFileAsync(SSH_KEYGEN, ['-q', '-t', type, ...bits, '-N', '', '-C', 'catalogtest-host', '-f', file])
  // "256 SHA256:… catalogtest-host (ED25519)"
  const { stdout } = await execFileAsync(SSH_KEYGEN, ['-l', '-E', 'sha256', '-f', `${file}.pub`])
  const fingerprint = stdout.split(' ')[1]
  if (!fingerprint?.startsWith('SHA256:')) throw new Error(`unexpected ssh-keygen -lf output: ${stdout}`)
  return fingerprint
}

async function makeClientKey(dir: string, name: string, type: string[], passphrase: string): Promise<{ privateKey: string; publicKey: string }> {
  const file = path.join(dir, name)
  // -a 4: bcrypt rounds of the passphrase's key derivation (16 by default), which ssh2 runs in JavaScript.
  await execFileAsync(SSH_KEYGEN, ['-q', ...type, '-a', '4', '-N', passphrase, '-C', `catalogtest-${name}`, '-f', file])
  return { privateKey: await fs.readFile(file, 'utf8'), publicKey: await fs.readFile(`${file}.pub`, 'utf8') }
}
