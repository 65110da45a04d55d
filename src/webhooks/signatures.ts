import { createHmac, randomBytes } from 'node:crypto'

// The Standard Webhooks signature scheme: a secret is `whsec_` and the base64 of its key bytes; a
// signature is `v1,` and the base64 HMAC-SHA256, under those bytes, of `${id}.${timestamp}.${body}`.
// Several signatures are separated by spaces: while a rotated-out secret is still valid, both sign.

export const SECRET_PREFIX = 'whsec_'
/** Bytes of a new secret's key: the specification asks for 24 to 64. */
const SECRET_BYTES = 32

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`
}

/** The HMAC key of a secret: the bytes its base64 part stands for. */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64')
}

/** One `v1,<base64>` signature of a message. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret)).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')
  return `v1,${mac}`
}

/** The `webhook-signature` header: one signature per secret, space separated. */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets.map((secret) => sign(secret, id, timestamp, body)).join(' ')
}

export interface SigningSecrets {
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: Date | null
}

/** The secrets that sign now: the current one, and the previous one until its expiry. */
export function activeSecrets(webhook: SigningSecrets, now: Date): string[] {
  const { secret, previous_secret: previous, previous_secret_expires_at: expires } = webhook
  return previous && expires && expires.getTime() > now.getTime() ? [secret, previous] : [secret]
}
