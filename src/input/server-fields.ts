import net from 'node:net'
import ssh2 from 'ssh2'
import type { FileCredentials } from '../db/schema.js'
import { BadRequestError } from '../errors.js'

// The fields of a login to a file server as clients write them (a channel's SFTP and FTPS
// destinations, a site's SFTP source): each mistake a 400 naming the field.

/** The login fields a client may send: the secrets are write-only, and checked here before they are sealed. */
export interface ServerLoginInput {
  host?: unknown
  port?: unknown
  user?: unknown
  password?: unknown
  private_key?: unknown
  passphrase?: unknown
  host_key_sha256?: unknown
}

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/
const FINGERPRINT = /^(?:SHA256:)?([A-Za-z0-9+/_-]{43})=?$/

/** The login's secrets as given (a key parsed with its passphrase); undefined when none were. */
export function readLoginCredentials(kind: 'sftp' | 'ftps', item: ServerLoginInput, at: string): FileCredentials | undefined {
  const prefix = at === '' ? '' : `${at}.`
  const given: FileCredentials = {}
  if (item.password !== undefined && item.password !== null) given.password = secretText(item.password, `${prefix}password`, 1024)
  if (item.private_key !== undefined && item.private_key !== null) given.private_key = text(item.private_key, `${prefix}private_key`, 16_384, true, true)
  if (item.passphrase !== undefined && item.passphrase !== null) given.passphrase = secretText(item.passphrase, `${prefix}passphrase`, 1024)
  if (given.private_key !== undefined) {
    const parsed = ssh2.utils.parseKey(given.private_key, given.passphrase)
    if (parsed instanceof Error) {
      const hint = given.passphrase === undefined ? ' (or one that needs a passphrase)' : ' this passphrase opens'
      throw new BadRequestError(`${prefix}private_key: not a private key${hint}: ${parsed.message}`)
    }
  }
  if (given.passphrase !== undefined && given.private_key === undefined) throw new BadRequestError(`${prefix}passphrase: goes with a private_key`)
  if (Object.keys(given).length === 0) return undefined
  if (kind === 'ftps' && given.password === undefined) throw new BadRequestError(`${prefix}password: an FTPS login needs a password`)
  return given
}

/** A server's host name or IP address, lower case and without a final dot. */
export function hostName(value: unknown, name: string): string {
  const host = text(value, name, 253)
  if (!net.isIP(host) && !HOSTNAME.test(host)) throw new BadRequestError(`${name}: "${host.slice(0, 100)}" is not a host name or IP address`)
  return host.toLowerCase().replace(/\.$/, '')
}

/** A password or passphrase: kept as written (spaces at either end are part of it), without control characters. */
export function secretText(value: unknown, name: string, max: number): string {
  if (typeof value !== 'string') throw new BadRequestError(`${name}: required, a string`)
  if ([...value].length > max) throw new BadRequestError(`${name}: at most ${max} characters`)
  if (hasControl(value, false)) throw new BadRequestError(`${name}: must not contain control characters`)
  return value
}

export function text(value: unknown, name: string, max: number, allowEmpty = false, multiline = false): string {
  if (typeof value !== 'string') throw new BadRequestError(`${name}: required, a string`)
  if (!allowEmpty && value.trim() === '') throw new BadRequestError(`${name}: must not be empty`)
  if ([...value].length > max) throw new BadRequestError(`${name}: at most ${max} characters`)
  if (hasControl(value, multiline)) throw new BadRequestError(`${name}: must not contain control characters`)
  return multiline ? value : value.trim()
}

export function port(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,5}$/.test(value) ? Number(value) : NaN
  if (!Number.isInteger(number) || number < 1 || number > 65535) throw new BadRequestError(`${name}: a port from 1 to 65535`)
  return number
}

export function flag(value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'boolean') throw new BadRequestError(`${name}: true or false`)
  return value
}

/** `SHA256:<43 base64 characters>` as `ssh-keygen -l` prints it; the prefix and padding may be left out, base64url too. */
export function fingerprint(value: unknown, name: string): string {
  if (value === undefined || value === null || value === '') {
    throw new BadRequestError(`${name}: required for SFTP, the server's host key fingerprint (ssh-keyscan -p PORT HOST | ssh-keygen -lf -)`)
  }
  const match = typeof value === 'string' ? FINGERPRINT.exec(value.trim()) : null
  if (!match?.[1]) throw new BadRequestError(`${name}: a SHA-256 fingerprint as ssh-keygen -l prints it, SHA256:<43 base64 characters>`)
  return `SHA256:${match[1].replace(/-/g, '+').replace(/_/g, '/')}`
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
