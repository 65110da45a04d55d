import dns from 'node:dns'
import net, { type LookupFunction } from 'node:net'

// The one gate for requests this service makes on a tenant's behalf (channel http destinations,
// later webhooks). A tenant must not be able to make the server call itself, its database, its
// neighbours or the cloud metadata service: the URL is checked when it is saved, and the address
// actually connected to is checked again after DNS resolution, so a name that changes its answer
// between the two (DNS rebinding) gains nothing.

export type AddressClass = 'loopback' | 'private' | 'shared' | 'link-local' | 'unique-local' | 'unspecified' | 'multicast' | 'reserved' | 'metadata'

// What ALLOW_PRIVATE_DESTINATIONS opens: the addresses a developer's machine and network use.
// Metadata services, unspecified, multicast and reserved addresses are never a destination.
const PRIVATE_CLASSES: ReadonlySet<AddressClass> = new Set(['loopback', 'private', 'shared', 'link-local', 'unique-local'])

const DESCRIPTION: Record<AddressClass, string> = {
  loopback: 'a loopback address',
  private: 'a private network address',
  shared: 'a shared (carrier-grade NAT) address',
  'link-local': 'a link-local address',
  'unique-local': 'a unique-local address',
  unspecified: 'the unspecified address',
  multicast: 'a multicast or broadcast address',
  reserved: 'a reserved address',
  metadata: 'a cloud metadata service address',
}

const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254'])
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal'])

function blockList(ranges: [string, number, 'ipv4' | 'ipv6'][]): net.BlockList {
  const list = new net.BlockList()
  for (const [address, prefix, family] of ranges) list.addSubnet(address, prefix, family)
  return list
}

// Most specific first: the first class whose list holds the address names it.
const IPV4: [AddressClass, net.BlockList][] = [
  ['unspecified', blockList([['0.0.0.0', 8, 'ipv4']])],
  ['loopback', blockList([['127.0.0.0', 8, 'ipv4']])],
  [
    'private',
    blockList([
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
    ]),
  ],
  ['shared', blockList([['100.64.0.0', 10, 'ipv4']])],
  ['link-local', blockList([['169.254.0.0', 16, 'ipv4']])],
  ['multicast', blockList([['224.0.0.0', 4, 'ipv4']])],
  // IETF protocol assignments, documentation, 6to4 relay, benchmarking, 240/4 and broadcast.
  [
    'reserved',
    blockList([
      ['192.0.0.0', 24, 'ipv4'],
      ['192.0.2.0', 24, 'ipv4'],
      ['192.88.99.0', 24, 'ipv4'],
      ['198.18.0.0', 15, 'ipv4'],
      ['198.51.100.0', 24, 'ipv4'],
      ['203.0.113.0', 24, 'ipv4'],
      ['240.0.0.0', 4, 'ipv4'],
    ]),
  ],
]
const IPV6: [AddressClass, net.BlockList][] = [
  ['loopback', blockList([['::1', 128, 'ipv6']])],
  ['unspecified', blockList([['::', 128, 'ipv6']])],
  ['link-local', blockList([['fe80::', 10, 'ipv6']])],
  ['unique-local', blockList([['fc00::', 7, 'ipv6']])],
  ['multicast', blockList([['ff00::', 8, 'ipv6']])],
  // Only global unicast (2000::/3) is a destination; inside it, protocol assignments (Teredo
  // included) and documentation addresses are not.
  [
    'reserved',
    blockList([
      ['2001::', 23, 'ipv6'],
      ['2001:db8::', 32, 'ipv6'],
      ['3fff::', 20, 'ipv6'],
    ]),
  ],
]
const GLOBAL_UNICAST = blockList([['2000::', 3, 'ipv6']])

/** The 16 bytes of an IPv6 address in any spelling (`::`, embedded dotted quad). */
function ipv6Bytes(address: string): number[] {
  let text = address
  const tail: number[] = []
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted?.[1]) {
    tail.push(...dotted[1].split('.').map(Number))
    text = `${text.slice(0, -dotted[1].length)}0:0`
  }
  const [head = '', rest] = text.split('::')
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)))
  const left = groups(head)
  const right = rest === undefined ? [] : groups(rest)
  const words = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right]
  const bytes = words.flatMap((word) => [word >> 8, word & 0xff])
  if (tail.length === 4) bytes.splice(12, 4, ...tail)
  return bytes
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if it carries one. */
function embeddedIpv4(bytes: number[]): string | undefined {
  const zero = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0)
  const quad = (at: number) => bytes.slice(at, at + 4).join('.')
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return quad(12)
  // IPv4-compatible (deprecated) — but ::1 and :: are themselves, not 0.0.0.1 / 0.0.0.0.
  if (zero(0, 12) && !zero(12, 15)) return quad(12)
  if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(4, 12)) return quad(12)
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return quad(2)
  return undefined
}

/** Why an IP address is no destination, or undefined for a public unicast address. */
export function classifyAddress(input: string): AddressClass | undefined {
  // A zone (fe80::1%eth0) names an interface, not another address.
  const address = input.split('%')[0] ?? ''
  const family = net.isIP(address)
  if (family === 4) {
    if (METADATA_ADDRESSES.has(address)) return 'metadata'
    return IPV4.find(([, list]) => list.check(address, 'ipv4'))?.[0]
  }
  if (family !== 6) return 'reserved'
  const bytes = ipv6Bytes(address.toLowerCase())
  const carried = embeddedIpv4(bytes)
  if (carried !== undefined) return classifyAddress(carried)
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1)
  if (METADATA_ADDRESSES.has(canonical)) return 'metadata'
  const found = IPV6.find(([, list]) => list.check(canonical, 'ipv6'))?.[0]
  if (found) return found
  return GLOBAL_UNICAST.check(canonical, 'ipv6') ? undefined : 'reserved'
}

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
}

const systemResolve: ResolveHost = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true })
// A name that does not answer in time is let through at save: the connect-time check still holds.
const SAVE_RESOLVE_TIMEOUT_MS = 5000

export function createOutboundGuard({ allowPrivate, resolve = systemResolve }: OutboundGuardOptions): OutboundGuard {
  const refusal = (address: string): string | undefined => {
    const found = classifyAddress(address)
    if (found === undefined || (allowPrivate && PRIVATE_CLASSES.has(found))) return undefined
    return DESCRIPTION[found]
  }
  const hostRefusal = (hostname: string): string | undefined => {
    const host = hostname.replace(/^\[|\]$/g, '')
    if (net.isIP(host)) {
      const reason = refusal(host)
      return reason && `${host} is ${reason}`
    }
    const name = host.replace(/\.$/, '').toLowerCase()
    if (METADATA_NAMES.has(name)) return `${name} is ${DESCRIPTION.metadata}`
    if (!allowPrivate && (name === 'localhost' || name.endsWith('.localhost'))) return `${name} is ${DESCRIPTION.loopback}`
    return undefined
  }
  const resolvedRefusal = (hostname: string, addresses: ResolvedAddress[]): string | undefined => {
    for (const { address } of addresses) {
      const reason = refusal(address)
      // The address itself stays out of the message: internal DNS answers are not the tenant's to see.
      if (reason) return `${hostname} resolves to ${reason}`
    }
    return undefined
  }

  const checkTarget = (url: string): URL => {
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
    const reason = hostRefusal(parsed.hostname)
    if (reason) throw new OutboundRefusedError(reason)
    return parsed
  }

  return {
    checkTarget,
    async checkUrl(url) {
      const parsed = checkTarget(url)
      const host = parsed.hostname.replace(/^\[|\]$/g, '')
      if (net.isIP(host)) return parsed
      let timer: NodeJS.Timeout | undefined
      const addresses = await Promise.race([
        resolve(host).catch(() => []),
        new Promise<ResolvedAddress[]>((done) => (timer = setTimeout(() => done([]), SAVE_RESOLVE_TIMEOUT_MS))),
      ]).finally(() => clearTimeout(timer))
      const reason = resolvedRefusal(host, addresses)
      if (reason) throw new OutboundRefusedError(reason)
      return parsed
    },
    lookup: (hostname, options, callback) => {
      const early = hostRefusal(hostname)
      if (early) {
        callback(new OutboundRefusedError(early), '', 0)
        return
      }
      resolve(hostname)
        .then((addresses) => {
          const family = options.family === 4 || options.family === 6 ? options.family : 0
          const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family)
          const reason = resolvedRefusal(hostname, addresses)
          if (reason) return callback(new OutboundRefusedError(reason), '', 0)
          const first = usable[0]
          if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0)
          if (options.all) return (callback as unknown as (error: null, addresses: ResolvedAddress[]) => void)(null, usable)
          callback(null, first.address, first.family)
        })
        .catch((error: NodeJS.ErrnoException) => callback(error, '', 0))
    },
  }
}
