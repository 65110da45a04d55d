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

/**
 * Personal access tokens carry a recognisable prefix so that leaked ones are easy to spot, and a
 * public id, GitHub-style: `cpat_<16 hex public id>_<43 base64url secret>` (65 characters). The id
 * names the token before it is checked, so that failed authentications can be counted per token
 * being guessed (src/auth/failed-auth-limit.ts). What is stored is the hash of the whole token.
 */
export function newAccessToken(): { token: string; publicId: string } {
  const publicId = randomBytes(8).toString('hex')
  return { token: `cpat_${publicId}_${randomBytes(32).toString('base64url')}`, publicId }
}

/** A token with a public id. Those issued before public ids (`cpat_` and 43 characters) do not match: they are found by their hash. */
const ACCESS_TOKEN = /^cpat_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$/

/** The public id of a personal access token, or null for a token without one (a legacy or malformed one). */
export function accessTokenPublicId(token: string): string | null {
  return ACCESS_TOKEN.exec(token)?.[1] ?? null
}

/** Whether two secrets are equal, in a time that tells nothing of where they differ (the digests are compared, so lengths leak nothing either). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest()
  return timingSafeEqual(digest(given), digest(expected))
}
