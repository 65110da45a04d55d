import dns from 'node:dns'
import net, { type LookupFunction } from 'node:net'
import { addressRefusal, hostRefusal, normalizeHost } from './address-classes.js'

// The one gate for requests this service makes on a tenant's behalf (channel http destinations and
// webhooks). A tenant must not be able to make the server call itself, its database, its
// neighbours or the cloud metadata service: the URL is checked when it is saved, and the address
// actually connected to is checked again after DNS resolution, so a name that changes its answer
// between the two (DNS rebinding) gains nothing.

/** A destination the guard refuses; `reason` is fit to show to the account that saved it. */
export class OutboundRefusedError extends Error {
  readonly code = 'ERR_OUTBOUND_REFUSED'
  constructor(readonly reason: string) {
    super(`refused by the outbound guard: ${reason}`)
    this.name = 'OutboundRefusedError'
  }
}

export interface ResolvedAddress {
  address: string
  family: number
}

export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>

export interface OutboundGuardOptions {
  /** ALLOW_PRIVATE_DESTINATIONS: loopback and private networks become destinations. */
  allowPrivate: boolean
  /** Name resolution; dns.lookup (the system resolver, as connections use) unless tests give one. */
  resolve?: ResolveHost
}

export interface OutboundGuard {
  /** The save-time check: scheme, credentials, port, host, and every address the host resolves to now. */
  checkUrl(url: string): Promise<URL>
  /**
   * The connect-time check of a URL as written: scheme, credentials, port and host (IP literals are
   * connected to without a lookup; names are checked again by `lookup`). Throws OutboundRefusedError.
   */
  checkTarget(url: string): URL
  /** For node:http(s) `lookup`: resolves, refuses when any address is forbidden, hands on the rest. */
  lookup: LookupFunction
  /** The save-time check of a file server's host name or address (SFTP, FTPS), as checkUrl's of a URL's host. */
  checkHost(host: string): Promise<void>
  /** The connect-time check of a file server's host: the address to connect to, checked, so that a later lookup cannot differ. */
  addressOf(host: string): Promise<string>
}

const systemResolve: ResolveHost = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true })
// A name whose resolution takes longer than this at save is refused like one that does not resolve.
const SAVE_RESOLVE_TIMEOUT_MS = 5000

type GuardPolicy = Required<OutboundGuardOptions>

function resolvedRefusal(hostname: string, addresses: ResolvedAddress[], allowPrivate: boolean): string | undefined {
  for (const { address } of addresses) {
    const reason = addressRefusal(address, allowPrivate)
    // The address itself stays out of the message: internal DNS answers are not the tenant's to see.
    if (reason) return `${hostname} resolves to ${reason}`
  }
  return undefined
}

function checkTarget(url: string, allowPrivate: boolean): URL {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new OutboundRefusedError('not a valid URL')
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new OutboundRefusedError('only http and https URLs are allowed')
  if (parsed.username !== '' || parsed.password !== '') throw new OutboundRefusedError('credentials in the URL are not allowed')
  // Port 0 is no port a server listens on: connecting to it means "any", whatever the OS makes of that.
  if (parsed.port === '0') throw new OutboundRefusedError('port 0 is not a destination port')
  const reason = hostRefusal(normalizeHost(parsed.hostname), allowPrivate)
  if (reason) throw new OutboundRefusedError(reason)
  return parsed
}

/** The addresses of a name, `[]` when it does not resolve, 'timeout' past SAVE_RESOLVE_TIMEOUT_MS. */
async function resolveForSave(resolve: ResolveHost, host: string): Promise<ResolvedAddress[] | 'timeout'> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    resolve(host).catch(() => []),
    new Promise<'timeout'>((done) => (timer = setTimeout(() => done('timeout'), SAVE_RESOLVE_TIMEOUT_MS))),
  ]).finally(() => clearTimeout(timer))
}

async function checkUrl(url: string, { allowPrivate, resolve }: GuardPolicy): Promise<URL> {
  const parsed = checkTarget(url, allowPrivate)
  const host = normalizeHost(parsed.hostname)
  if (net.isIP(host)) return parsed
  // A name must resolve when it is saved: one that does not (a typo, a name only some resolver
  // knows, a spelling such as a trailing dot that skips the search domains) is refused, so that
  // what is stored is what was checked. Each connection resolves and checks it again.
  const addresses = await resolveForSave(resolve, host)
  if (addresses === 'timeout') throw new OutboundRefusedError(`${host} did not resolve within ${SAVE_RESOLVE_TIMEOUT_MS / 1000} s`)
  if (addresses.length === 0) throw new OutboundRefusedError(`${host} does not resolve to any address`)
  const reason = resolvedRefusal(host, addresses, allowPrivate)
  if (reason) throw new OutboundRefusedError(reason)
  return parsed
}

function guardedLookup({ allowPrivate, resolve }: GuardPolicy): LookupFunction {
  return (given, options, callback) => {
    // The same host as at save, in the same spelling: lower case, without a trailing dot.
    const hostname = normalizeHost(given)
    const early = hostRefusal(hostname, allowPrivate)
    if (early) {
      callback(new OutboundRefusedError(early), '', 0)
      return
    }
    resolve(hostname)
      .then((addresses) => {
        const family = options.family === 4 || options.family === 6 ? options.family : 0
        const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family)
        const reason = resolvedRefusal(hostname, addresses, allowPrivate)
        if (reason) return callback(new OutboundRefusedError(reason), '', 0)
        const first = usable[0]
        if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0)
        if (options.all) return (callback as unknown as (error: null, addresses: ResolvedAddress[]) => void)(null, usable)
        callback(null, first.address, first.family)
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, '', 0))
  }
}

export function createOutboundGuard({ allowPrivate, resolve = systemResolve }: OutboundGuardOptions): OutboundGuard {
  const policy: GuardPolicy = { allowPrivate, resolve }
  return {
    checkTarget: (url) => checkTarget(url, allowPrivate),
    checkUrl: (url) => checkUrl(url, policy),
    lookup: guardedLookup(policy),
    checkHost: async (host) => {
      await checkUrl(`https://${hostForUrl(host)}/`, policy)
    },
    addressOf: (host) => addressOf(host, policy),
  }
}

/** An IPv6 literal goes in brackets in a URL's authority. */
function hostForUrl(host: string): string {
  return net.isIP(host) === 6 ? `[${host}]` : host
}

/** The first allowed address of `host`; every address it resolves to must be allowed. */
async function addressOf(host: string, { allowPrivate, resolve }: GuardPolicy): Promise<string> {
  const name = normalizeHost(checkTarget(`https://${hostForUrl(host)}/`, allowPrivate).hostname)
  if (net.isIP(name)) return name
  const addresses = await resolve(name).catch(() => [])
  const reason = resolvedRefusal(name, addresses, allowPrivate)
  if (reason) throw new OutboundRefusedError(reason)
  const first = addresses[0]
  if (!first) throw new OutboundRefusedError(`${name} does not resolve to any address`)
  return first.address
}
