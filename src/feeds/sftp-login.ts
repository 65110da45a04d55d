import { createHash } from 'node:crypto'
import type { CipherAlgorithm } from 'ssh2'
import SftpClient from 'ssh2-sftp-client'
import type { FileCredentials } from '../db/schema.js'
import { failure, networkReason, type DeliveryResult } from './file-server-push.js'

// The one SFTP login of the service, for a channel's pushes and a site's SFTP sources alike: the
// host key checked against the SHA-256 fingerprint the tenant gave before any credential is sent.

/** `SHA256:<base64 without padding>` of a host key, as `ssh-keygen -l` prints it. */
export function hostKeyFingerprint(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`
}

// AES-GCM goes first among the ciphers, though ChaCha20-Poly1305 measured no slower here.
const CIPHERS: CipherAlgorithm[] = ['aes128-gcm@openssh.com', 'aes256-gcm@openssh.com', 'aes128-ctr', 'aes256-ctr', 'chacha20-poly1305@openssh.com']

export interface SftpLogin {
  /** The address the outbound guard checked (connected to instead of the host name). */
  address: string
  port: number
  user: string
  hostKeySha256: string
  credentials: FileCredentials
  timeoutMs: number
  /** Says what the failure left undone ("nothing was sent", "nothing was read"). */
  nothingDone: string
}

/** A logged-in client, or why not: a refused login or a host key mismatch is not retried, the network's failures are. */
export async function loginSftp(login: SftpLogin): Promise<{ client: SftpClient } | { failed: DeliveryResult }> {
  const client = new SftpClient('catalog')
  let presented: string | undefined
  try {
    await client.connect({
      host: login.address,
      port: login.port,
      username: login.user,
      password: login.credentials.password,
      privateKey: login.credentials.private_key,
      passphrase: login.credentials.passphrase,
      readyTimeout: login.timeoutMs,
      algorithms: { cipher: CIPHERS },
      hostVerifier: (key: Buffer) => {
        presented = hostKeyFingerprint(key)
        return presented === login.hostKeySha256
      },
    })
    return { client }
  } catch (error) {
    await client.end().catch(() => {})
    if (presented !== undefined && presented !== login.hostKeySha256) {
      return { failed: failure('refused', `the server's host key is ${presented}, not the ${login.hostKeySha256} expected; ${login.nothingDone}`, false) }
    }
    const { message, level, code } = error as { message?: string; level?: string; code?: string }
    if (level === 'client-authentication' || /authentication/i.test(message ?? '')) {
      return { failed: failure('refused', `the server refused the login (user, password or key); ${login.nothingDone}`, false) }
    }
    return { failed: failure('unreachable', `could not connect: ${networkReason(code, message)}`, true) }
  }
}

/**
 * What an SFTP read or write that failed ran into: the server's refusal (status 3, permission
 * denied; status 2, no such file or directory), which a retry does not change, or the network's
 * failure in the service's words. The server's own text stays out.
 */
export function sftpFailureOf(error: unknown): { refused: 'denied' | 'missing' } | { broken: string } {
  const { message = '', code } = error as { message?: string; code?: number | string }
  if (code === 3 || /permission denied/i.test(message)) return { refused: 'denied' }
  if (code === 2 || /no such file/i.test(message)) return { refused: 'missing' }
  return { broken: networkReason(typeof code === 'string' ? code : undefined, message) }
}
