import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { promisify } from 'node:util'
import { freePort } from '../../src/db/free-port.js'
import {
  ServerProcess,
  ensureTestUser,
  makeRoot,
  makeServerDir,
  removeAtExit,
  removeDir,
  requireServerTools,
  startOnFreePort,
  TEST_USER,
  type ProcessSpec,
} from './sftp-server.js'

// A real FTP server for the tests (issue 34): vsftpd in the foreground on a loopback port, explicit TLS
// (AUTH TLS, required for the login and the data) with a self-signed certificate, or plain FTP for the
// tests of an insecure destination. The test user, the process and its directory are sftp-server.ts's.

const execFileAsync = promisify(execFile)

const VSFTPD = '/usr/sbin/vsftpd'
const OPENSSL = '/usr/bin/openssl'
/** The PAM service vsftpd logs local users in through (Debian's: /etc/ftpusers, common-auth, pam_shells). */
const PAM_SERVICE = 'vsftpd'
/** Ports for passive data connections, one per transfer at a time: enough for tests that transfer side by side. */
const PASSIVE_PORTS = 20

export interface FtpsServerOptions {
  /** Explicit TLS required for login and data (default); false: plain FTP only (`ssl_enable=NO`). */
  tls?: boolean
  /** Directories created inside the root (default ["upload"]); the root and they are the user's, writable. */
  writableDirs?: string[]
  /** Bound for vsftpd to answer after it starts (default 15 s). */
  startTimeoutMs?: number
}

export interface FtpServer {
  host: '127.0.0.1'
  port: number
  user: string
  password: string
  /** Whether the server requires TLS (AUTH TLS) for the login and the data. */
  tls: boolean
  /** The local directory the user is chrooted to: remote `/upload/a.csv` is `path.join(root, 'upload/a.csv')`. */
  root: string
  /** vsftpd's output and its log file (the FTP protocol, line by line). */
  log(): string
  /** Cuts every open connection (the processes vsftpd forked for them); the server keeps listening. */
  dropConnections(): Promise<number>
  /** Takes the server down while `action` runs, then starts it again on the same port with the same files. */
  dropConnectionsDuring<T>(action: () => Promise<T>): Promise<T>
  /** Kills vsftpd and its connections and removes its directory (and so the uploaded files). */
  stop(): Promise<void>
}

export interface FtpsServer extends FtpServer {
  tls: true
  /** The server's self-signed certificate (PEM, CN and subjectAltName 127.0.0.1): pass it as the client's `ca`. */
  certificate: string
}

/** Starts vsftpd for the test user, chrooted to a fresh directory: FTPS unless `tls: false`. */
export function startFtpsServer(options?: FtpsServerOptions & { tls?: true }): Promise<FtpsServer>
export function startFtpsServer(options: FtpsServerOptions & { tls: false }): Promise<FtpServer>
export async function startFtpsServer(options: FtpsServerOptions = {}): Promise<FtpServer | FtpsServer> {
  const tls = options.tls ?? true
  requireServerTools('vsftpd', [VSFTPD, '/usr/sbin/useradd', '/usr/sbin/chpasswd', '/usr/bin/flock', ...(tls ? [OPENSSL] : [])], [`/etc/pam.d/${PAM_SERVICE}`])
  const user = await ensureTestUser()
  await refuseFtpusersListing(user.name)
  const dir = await makeServerDir(tls ? 'ftps' : 'ftp')
  removeAtExit(dir)
  try {
    const root = path.join(dir, 'root')
    // The user's own root (allow_writeable_chroot): vsftpd lets it write wherever it is chrooted.
    await makeRoot(root, user, user, options.writableDirs ?? ['upload'])
    // vsftpd's own chroot before a login (secure_chroot_dir): empty, root's, not writable by anyone else.
    await fs.mkdir(path.join(dir, 'empty'), { mode: 0o755 })
    const certificate = tls ? await makeCertificate(dir) : undefined
    const specFor = async (port: number): Promise<ProcessSpec> => {
      const config = path.join(dir, 'vsftpd.conf')
      await fs.writeFile(config, vsftpdConfig({ dir, root, port, passive: await freePortRange(PASSIVE_PORTS), tls }), { mode: 0o600 })
      return {
        name: 'vsftpd',
        command: VSFTPD,
        args: [config],
        port,
        banner: '220',
        startTimeoutMs: options.startTimeoutMs,
        logFile: path.join(dir, 'vsftpd.log'),
        stdinFile: path.join(dir, 'vsftpd.stdin'),
      }
    }
    let vsftpd = await startOnFreePort(specFor)
    const server: FtpServer = {
      host: '127.0.0.1',
      port: vsftpd.spec.port,
      user: user.name,
      password: user.password,
      tls,
      root,
      log: () => vsftpd.log(),
      dropConnections: () => vsftpd.dropConnections(),
      async dropConnectionsDuring(action) {
        await vsftpd.kill()
        try {
          return await action()
        } finally {
          vsftpd = await ServerProcess.start(vsftpd.spec)
        }
      },
      async stop() {
        await vsftpd.kill()
        await removeDir(dir)
      },
    }
    return certificate === undefined ? server : { ...server, tls: true, certificate }
  } catch (error) {
    await removeDir(dir)
    throw error
  }
}

/** /etc/ftpusers lists the users vsftpd's PAM service refuses (root, daemon, …): the test user must not be one. */
async function refuseFtpusersListing(name: string): Promise<void> {
  const listed = await fs.readFile('/etc/ftpusers', 'utf8').catch(() => '')
  if (listed.split('\n').some((line) => line.trim() === name)) {
    throw new Error(`/etc/ftpusers lists ${name}: vsftpd's PAM service (/etc/pam.d/${PAM_SERVICE}) would refuse its login`)
  }
}

async function makeCertificate(dir: string): Promise<string> {
  const certFile = path.join(dir, 'cert.pem')
  // Node checks an IP address against the certificate's subjectAltName only, never its CN: both are 127.0.0.1.
  await execFileAsync(OPENSSL, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    path.join(dir, 'key.pem'),
    '-out',
    certFile,
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-days',
    '1',
  ])
  return fs.readFile(certFile, 'utf8')
}

/** `count` consecutive ports of 127.0.0.1 that nothing listens on right now, for passive data connections. */
async function freePortRange(count: number): Promise<{ min: number; max: number }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const min = await freePort()
    const max = min + count - 1
    if (max > 65_535) continue
    const free = await Promise.all(Array.from({ length: count - 1 }, (_, index) => isFree(min + 1 + index)))
    if (free.every(Boolean)) return { min, max }
  }
  throw new Error(`found no ${count} consecutive free ports on 127.0.0.1`)
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.unref()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

interface VsftpdSetup {
  dir: string
  root: string
  port: number
  passive: { min: number; max: number }
  tls: boolean
}

function vsftpdConfig({ dir, root, port, passive, tls }: VsftpdSetup): string {
  const lines = [
    `# Generated by test/helpers/ftps-server.ts: an FTP${tls ? 'S' : ''} server for ${TEST_USER}, chrooted to ${root}.`,
    'listen=YES',
    'listen_ipv6=NO',
    'listen_address=127.0.0.1',
    `listen_port=${port}`,
    'background=NO',
    'anonymous_enable=NO',
    'local_enable=YES',
    'write_enable=YES',
    'local_umask=022',
    `local_root=${root}`,
    'chroot_local_user=YES',
    'allow_writeable_chroot=YES',
    `secure_chroot_dir=${path.join(dir, 'empty')}`,
    `pam_service_name=${PAM_SERVICE}`,
    // Not needed on the machine this was written on, but safer elsewhere: vsftpd's seccomp filter has killed
    // sessions under container runtimes' own seccomp profiles ("500 OOPS: child died"), and a new network
    // namespace per session (isolate_network) can make each login slow.
    'seccomp_sandbox=NO',
    'isolate=NO',
    'isolate_network=NO',
    'pasv_enable=YES',
    'pasv_address=127.0.0.1',
    `pasv_min_port=${passive.min}`,
    `pasv_max_port=${passive.max}`,
    'connect_from_port_20=NO',
    'delay_failed_login=0',
    'syslog_enable=NO',
    'xferlog_enable=YES',
    'xferlog_std_format=NO',
    'log_ftp_protocol=YES',
    `vsftpd_log_file=${path.join(dir, 'vsftpd.log')}`,
  ]
  if (!tls) return [...lines, 'ssl_enable=NO', ''].join('\n')
  return [
    ...lines,
    'ssl_enable=YES',
    'allow_anon_ssl=NO',
    'force_local_logins_ssl=YES',
    'force_local_data_ssl=YES',
    `rsa_cert_file=${path.join(dir, 'cert.pem')}`,
    `rsa_private_key_file=${path.join(dir, 'key.pem')}`,
    // require_ssl_reuse stays at its default, YES, as on most servers: a data connection must resume the
    // control connection's TLS session, which basic-ftp does.
    '',
  ].join('\n')
}
