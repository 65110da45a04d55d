import { sign, unsign } from '@fastify/cookie'

// The session cookie carries its id and an HMAC-SHA256 of it (@fastify/cookie's signer) under the
// key every process reads from the database (console_key), so a cookie made up by a client is
// refused before any lookup. The key is read per request, which the plugin's own signCookie (one
// secret at registration) cannot do: its sign and unsign take the key each time.

export function signedValue(value: string, key: string): string {
  return sign(value, key)
}

/** The value of a signed cookie, or undefined when its signature does not match. */
export function unsignedValue(signed: string, key: string): string | undefined {
  const result = unsign(signed, key)
  return result.valid && result.value !== null ? result.value : undefined
}
