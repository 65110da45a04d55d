// Headers that authenticate one credential, spelled as real clients spell them (issue 21): each
// must be the same caller, and so count on the same rate-limit counter.

/** Six spellings of one bearer header. */
export function bearerSpellings(token: string): string[] {
  return [`Bearer ${token}`, `bearer ${token}`, `BEARER ${token}`, `Bearer  ${token}`, `Bearer\t${token}`, `bEaReR \t ${token}`]
}

/** Three spellings of one X-Auth-Token (`client_id:secret`). */
export function xAuthTokenSpellings(xAuthToken: string): string[] {
  const separator = xAuthToken.indexOf(':')
  const clientId = xAuthToken.slice(0, separator)
  const secret = xAuthToken.slice(separator + 1)
  return [xAuthToken, `${clientId} :${secret}`, `${clientId}:  ${secret}`]
}
