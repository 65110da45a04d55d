import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import type { Config } from '../config.js'
import { AppError } from '../errors.js'

// Credentials the platform must use itself (a file server's password or private key), sealed with
// AES-256-GCM under a key from the operator's configuration, so that a dump of the database alone
// reveals none of them (docs/design.md section 15). A sealed value names the key that sealed it:
// `cb1.<key id>.<iv>.<tag>.<ciphertext>`, base64url, the key id the first 8 hex digits of the key's
// SHA-256. Keys are rotated by adding the new one as CREDENTIALS_KEY, the old ones to
// CREDENTIALS_KEYS_PREVIOUS, and running `catalog-platform reseal-credentials`.

const PREFIX = 'cb1'

export interface CredentialKeys {
  /** CREDENTIALS_KEY: 32 random bytes, base64 (`openssl rand -base64 32`). */
  current?: string
  /** CREDENTIALS_KEYS_PREVIOUS: keys that sealed values before a rotation, for opening only. */
  previous?: string[]
  /** Without a configured key (one process on its embedded database): the file that holds one, made on first use. */
  keyFile?: string
}

/** No key is configured, on a database other processes may share: credentials cannot be stored. */
export class CredentialsNotConfiguredError extends AppError {
  constructor() {
    super(503, 'This server cannot store credentials: its operator has not set CREDENTIALS_KEY (see the README, "Configuration")', 'not_configured')
  }
}

export class CredentialBox {
  private current: Buffer | null
  private readonly byId = new Map<string, Buffer>()

  constructor(private readonly keys: CredentialKeys) {
    this.current = keys.current ? keyOf(keys.current, 'CREDENTIALS_KEY') : null
    for (const [i, text] of (keys.previous ?? []).entries()) this.remember(keyOf(text, `CREDENTIALS_KEYS_PREVIOUS[${i}]`))
    if (this.current) this.remember(this.current)
  }

  /** Whether values can be sealed (a key is configured, or can be made in the key file). */
  get ready(): boolean {
    return this.current !== null || this.keys.keyFile !== undefined
  }

  seal(plain: string): string {
    const key = this.sealingKey()
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', key, iv)
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
    return [PREFIX, keyId(key), iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.')
  }

  /** The plain value; throws when no configured key sealed it, or it was altered. */
  open(sealed: string): string {
    const [prefix, id, iv, tag, data] = sealed.split('.')
    if (prefix !== PREFIX || !id || iv === undefined || tag === undefined || data === undefined) throw new Error('not a sealed value')
    this.sealingKeyIfFile()
    const key = this.byId.get(id)
    if (!key) throw new Error(`the key ${id} that sealed this value is not configured (CREDENTIALS_KEY, CREDENTIALS_KEYS_PREVIOUS)`)
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8')
  }

  /** Whether `sealed` was sealed with the current key (a reseal leaves it). */
  isCurrent(sealed: string): boolean {
    const key = this.current ?? this.sealingKeyIfFile()
    return key !== null && sealed.split('.')[1] === keyId(key)
  }

  private remember(key: Buffer): void {
    this.byId.set(keyId(key), key)
  }

  private sealingKey(): Buffer {
    const key = this.current ?? this.sealingKeyIfFile()
    if (!key) throw new CredentialsNotConfiguredError()
    return key
  }

  /** The key file's key, read or made once (0600, beside the embedded database's data). */
  private sealingKeyIfFile(): Buffer | null {
    if (this.current || !this.keys.keyFile) return this.current
    const file = this.keys.keyFile
    if (!fs.existsSync(file)) {
      fs.mkdirSync(path.dirname(file), { recursive: true })
      try {
        fs.writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' })
      } catch (error) {
        // Another process (the CLI beside the server) made it first: read theirs.
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
    }
    this.current = keyOf(fs.readFileSync(file, 'utf8').trim(), file)
    this.remember(this.current)
    return this.current
  }
}

function keyOf(text: string, name: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64')
  if (key.length !== 32) throw new Error(`${name} must be 32 bytes in base64 (openssl rand -base64 32); it is ${key.length} bytes`)
  return key
}

function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8)
}

/**
 * The key that seals file servers' credentials: CREDENTIALS_KEY; without it, on the embedded
 * database (one process, and its CLI), a key file beside its data, made on first use; on a
 * DATABASE_URL, none (a credential is then refused with a 503 naming CREDENTIALS_KEY).
 */
export function credentialBoxOf(config: Pick<Config, 'CREDENTIALS_KEY' | 'CREDENTIALS_KEYS_PREVIOUS' | 'DATABASE_URL' | 'DATA_DIR'>): CredentialBox {
  const previous = config.CREDENTIALS_KEYS_PREVIOUS.split(',').filter((key) => key.trim() !== '')
  const keyFile = config.CREDENTIALS_KEY || config.DATABASE_URL ? undefined : path.join(config.DATA_DIR, 'credentials.key')
  return new CredentialBox({ current: config.CREDENTIALS_KEY, previous, keyFile })
}
