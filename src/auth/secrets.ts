import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

// Secrets and tokens are shown once and stored only as SHA-256 hashes. They carry 192+ bits of
// randomness, so a fast hash is enough: there is nothing to brute-force from the hash.
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex')
}

export function newClientId(): string {
  return `cp_${randomBytes(12).toString('hex')}`
}

export function newClientSecret(): string {
  return randomBytes(32).toString('base64url')
}

/** Personal access tokens carry a recognisable prefix so that leaked ones are easy to spot. */
export function newAccessToken(): string {
  return `cpat_${randomBytes(32).toString('base64url')}`
}

/** Whether two secrets are equal, in a time that tells nothing of where they differ (the digests are compared, so lengths leak nothing either). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest()
  return timingSafeEqual(digest(given), digest(expected))
}
