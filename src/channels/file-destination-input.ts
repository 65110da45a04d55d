import net from 'node:net'
import ssh2 from 'ssh2'
import type { FileCredentials, FileServerSettings } from '../db/schema.js'
import { BadRequestError } from '../errors.js'

// A channel's SFTP and FTPS destinations as a client writes them (issue 34), checked field by field:
// every mistake is a 400 naming the field. Credentials are write-only: a destination given without
// them keeps the ones stored for the same server and user (channels.ts), and no answer shows them.

/** What a client may send for a file server destination (beside `type`, `name` and `active`). */
export interface FileDestinationInput {
  host?: unknown
  port?: unknown
  user?: unknown
  password?: unknown
  private_key?: unknown
  passphrase?: unknown
  host_key_sha256?: unknown
  directory?: unknown
  insecure?: unknown
  tls_certificate_sha256?: unknown
  temp_rename?: unknown
}

export interface FileDestination {
  settings: FileServerSettings
  /** Undefined: none given, the stored ones stay. */
  credentials: FileCredentials | undefined
}

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/
const FINGERPRINT = /^(?:SHA256:)?([A-Za-z0-9+/_-]{43})=?$/

export function readFileDestination(kind: 'sftp' | 'ftps', item: FileDestinationInput, at: string): FileDestination {
  const host = text(item.host, `${at}.host`, 253)
  if (!net.isIP(host) && !HOSTNAME.test(host)) throw new BadRequestError(`${at}.host: "${host.slice(0, 100)}" is not a host name or IP address`)
  const settings: FileServerSettings = {
    host: host.toLowerCase().replace(/\.$/, ''),
    port: port(item.port, `${at}.port`, kind === 'sftp' ? 22 : 21),
    user: text(item.user, `${at}.user`, 255),
    directory: item.directory === undefined || item.directory === null ? '' : text(item.directory, `${at}.directory`, 1000, true),
    temp_rename: flag(item.temp_rename, `${at}.temp_rename`, true),
  }
  if (kind === 'sftp') settings.host_key_sha256 = fingerprint(item.host_key_sha256, `${at}.host_key_sha256`)
  if (kind === 'ftps') settings.insecure = flag(item.insecure, `${at}.insecure`, false)
  if (kind === 'ftps' && item.tls_certificate_sha256 !== undefined && item.tls_certificate_sha256 !== null && item.tls_certificate_sha256 !== '') {
    settings.tls_certificate_sha256 = certificatePin(item.tls_certificate_sha256, `${at}.tls_certificate_sha256`)
  }
  if (kind === 'ftps' && item.private_key !== undefined && item.private_key !== null) {
    throw new BadRequestError(`${at}.private_key: an FTPS login takes a password, not a key`)
  }
  return { settings, credentials: credentials(kind, item, at) }
}

function credentials(kind: 'sftp' | 'ftps', item: FileDestinationInput, at: string): FileCredentials | undefined {
  const given: FileCredentials = {}
  if (item.password !== undefined && item.password !== null) given.password = text(item.password, `${at}.password`, 1024, true)
  if (item.private_key !== undefined && item.private_key !== null) given.private_key = text(item.private_key, `${at}.private_key`, 16_384, true, true)
  if (item.passphrase !== undefined && item.passphrase !== null) given.passphrase = text(item.passphrase, `${at}.passphrase`, 1024, true)
  if (given.private_key !== undefined) {
    const parsed = ssh2.utils.parseKey(given.private_key, given.passphrase)
    if (parsed instanceof Error) {
      const hint = given.passphrase === undefined ? ' (or one that needs a passphrase)' : ' this passphrase opens'
      throw new BadRequestError(`${at}.private_key: not a private key${hint}: ${parsed.message}`)
    }
  }
  if (given.passphrase !== undefined && given.private_key === undefined) throw new BadRequestError(`${at}.passphrase: goes with a private_key`)
  if (Object.keys(given).length === 0) return undefined
  if (kind === 'ftps' && given.password === undefined) throw new BadRequestError(`${at}.password: an FTPS login needs a password`)
  return given
}

function text(value: unknown, name: string, max: number, allowEmpty = false, multiline = false): string {
  if (typeof value !== 'string') throw new BadRequestError(`${name}: required, a string`)
  if (!allowEmpty && value.trim() === '') throw new BadRequestError(`${name}: must not be empty`)
  if ([...value].length > max) throw new BadRequestError(`${name}: at most ${max} characters`)
  if (hasControl(value, multiline)) throw new BadRequestError(`${name}: must not contain control characters`)
  return multiline ? value : value.trim()
}

function port(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,5}$/.test(value) ? Number(value) : NaN
  if (!Number.isInteger(number) || number < 1 || number > 65535) throw new BadRequestError(`${name}: a port from 1 to 65535`)
  return number
}

function flag(value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'boolean') throw new BadRequestError(`${name}: true or false`)
  return value
}

/** `SHA256:<43 base64 characters>` as `ssh-keygen -l` prints it; the prefix and padding may be left out, base64url too. */
function fingerprint(value: unknown, name: string): string {
  if (value === undefined || value === null || value === '') {
    throw new BadRequestError(`${name}: required for SFTP, the server's host key fingerprint (ssh-keyscan -p PORT HOST | ssh-keygen -lf -)`)
  }
  const match = typeof value === 'string' ? FINGERPRINT.exec(value.trim()) : null
  if (!match?.[1]) throw new BadRequestError(`${name}: a SHA-256 fingerprint as ssh-keygen -l prints it, SHA256:<43 base64 characters>`)
  return `SHA256:${match[1].replace(/-/g, '+').replace(/_/g, '/')}`
}

/** A TLS certificate's SHA-256 as openssl prints it (`AB:CD:…`); colons and case are free. */
function certificatePin(value: unknown, name: string): string {
  const hex = typeof value === 'string' ? value.replace(/[:\s]/g, '').toUpperCase() : ''
  if (!/^[0-9A-F]{64}$/.test(hex)) throw new BadRequestError(`${name}: a SHA-256 fingerprint, 64 hex digits (openssl x509 -noout -fingerprint -sha256)`)
  return hex.match(/../g)!.join(':')
}

/** A control character (C0 or DEL); a key's line ends and tabs are allowed where the text has lines. */
function hasControl(text: string, multiline: boolean): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (multiline && (code === 9 || code === 10 || code === 13)) continue
    if (code < 32 || code === 127) return true
  }
  return false
}
