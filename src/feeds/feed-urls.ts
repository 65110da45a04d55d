import { randomBytes } from 'node:crypto'

// Feed files of the built-in destination are public at /feeds/<token>/<filename>: the token is the secret.

/** A new unguessable path segment for a feed destination (192 random bits). */
export function newFeedToken(): string {
  return randomBytes(24).toString('base64url')
}

export function feedUrl(base: string, token: string, filename: string): string {
  return `${base.replace(/\/+$/, '')}/feeds/${encodeURIComponent(token)}/${encodeURIComponent(filename)}`
}
