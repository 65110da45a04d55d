import { createHash } from 'node:crypto'
import type { CipherAlgorithm, ServerHostKeyAlgorithm } from 'ssh2'
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

// A server has a host key of each kind (ssh-keyscan lists them all), and offers the one the client
// prefers: a fingerprint of another kind is asked for by that kind alone, once the first is not it.
const HOST_KEY_KINDS: ServerHostKeyAlgorithm[][] = [
  ['ssh-ed25519'],
  ['ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521'],
  ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'],
]

interface PresentedKey {
  fingerprint: string
  /** The key's kind as its wire form starts (`ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`). */
  type: string
}

/** The kind a host key's wire form names first: a length, then the name. */
function keyType(key: Buffer): string {
  if (key.length < 4) return ''
  return key.subarray(4, 4 + Math.min(key.readUInt32BE(0), 64)).toString('latin1')
}

/** A logged-in client, or why not: a refused login or a host key mismatch is not retried, the network's failures are. */
export async function loginSftp(login: SftpLogin): Promise<{ client: SftpClient } | { failed: DeliveryResult }> {
  const presented: PresentedKey[] = []
  let attempt = await connectOnce(login, undefined, presented)
  for (const kind of HOST_KEY_KINDS) {
    if (!('mismatch' in attempt)) break
    if (presented.some((key) => kind.includes(key.type as ServerHostKeyAlgorithm))) continue
    attempt = await connectOnce(login, kind, presented)
  }
  if ('mismatch' in attempt) {
    const [first, ...others] = [...new Set(presented.map((key) => key.fingerprint))]
    const nor = others.length > 0 ? ` (nor are its other keys ${others.join(', ')})` : ''
    return {
      failed: failure('refused', `the server's host key is ${first ?? 'unknown'}, not the ${login.hostKeySha256} expected${nor}; ${login.nothingDone}`, false),
    }
  }
  return attempt
}

/** One connection offering `hostKeys` (the client's default when undefined); a key of another kind than the server has ends it as a mismatch too. */
async function connectOnce(
  login: SftpLogin,
  hostKeys: ServerHostKeyAlgorithm[] | undefined,
  presented: PresentedKey[],
): Promise<{ client: SftpClient } | { failed: DeliveryResult } | { mismatch: true }> {
  const client = new SftpClient('catalog')
  let shown: string | undefined
  try {
    await client.connect({
      host: login.address,
      port: login.port,
      username: login.user,
      password: login.credentials.password,
      privateKey: login.credentials.private_key,
      passphrase: login.credentials.passphrase,
      readyTimeout: login.timeoutMs,
      algorithms: { cipher: CIPHERS, ...(hostKeys && { serverHostKey: hostKeys }) },
      hostVerifier: (key: Buffer) => {
        shown = hostKeyFingerprint(key)
        presented.push({ fingerprint: shown, type: keyType(key) })
        return shown === login.hostKeySha256
      },
    })
    return { client }
  } catch (error) {
    await client.end().catch(() => {})
    const { message, level, code } = error as { message?: string; level?: string; code?: string }
    if (shown !== undefined && shown !== login.hostKeySha256) return { mismatch: true }
    if (hostKeys !== undefined && shown === undefined && /handshake|host key|no matching/i.test(message ?? '')) return { mismatch: true }
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
