import type { FileCredentials, FileServerSettings } from '../db/schema.js'
import { BadRequestError } from '../errors.js'
import { fingerprint, flag, hostName, port, readLoginCredentials, text, type ServerLoginInput } from '../input/server-fields.js'

// A channel's SFTP and FTPS destinations as a client writes them, checked field by field:
// every mistake is a 400 naming the field. Credentials are write-only: a destination given without
// them keeps the ones stored for the same server and user (channels.ts), and no answer shows them.

/** What a client may send for a file server destination (beside `type`, `name` and `active`). */
export interface FileDestinationInput extends ServerLoginInput {
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

export function readFileDestination(kind: 'sftp' | 'ftps', item: FileDestinationInput, at: string): FileDestination {
  const settings: FileServerSettings = {
    host: hostName(item.host, `${at}.host`),
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
  return { settings, credentials: readLoginCredentials(kind, item, at) }
}

/** A TLS certificate's SHA-256 as openssl prints it (`AB:CD:…`); colons and case are free. */
function certificatePin(value: unknown, name: string): string {
  const hex = typeof value === 'string' ? value.replace(/[:\s]/g, '').toUpperCase() : ''
  if (!/^[0-9A-F]{64}$/.test(hex)) throw new BadRequestError(`${name}: a SHA-256 fingerprint, 64 hex digits (openssl x509 -noout -fingerprint -sha256)`)
  return hex.match(/../g)!.join(':')
}
