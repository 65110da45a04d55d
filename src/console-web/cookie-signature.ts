import { createHmac, timingSafeEqual } from 'node:crypto'

// The session cookie carries its id and an HMAC-SHA256 of it under the key every process reads from
// the database (console_key), so a cookie made up by a client is refused before any lookup.

export function signValue(value: string, key: string): string {
  return `${value}.${mac(value, key)}`
}

/** The value of a signed cookie, or undefined when its signature does not match. */
export function unsignValue(signed: string, key: string): string | undefined {
  const dot = signed.lastIndexOf('.')
  if (dot <= 0) return undefined
  const value = signed.slice(0, dot)
  const given = Buffer.from(signed.slice(dot + 1))
  const expected = Buffer.from(mac(value, key))
  return given.length === expected.length && timingSafeEqual(given, expected) ? value : undefined
}

function mac(value: string, key: string): string {
  return createHmac('sha256', key).update(value).digest('base64url')
}
