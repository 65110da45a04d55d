import net from 'node:net'
import ipaddr from 'ipaddr.js'

// What the outbound guard (outbound-guard.ts) knows of addresses: the class of every IPv4 and IPv6
// address a tenant must not reach, cloud metadata endpoints by address and by name, and the
// refusal each gives.

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

// Every cloud metadata and credential endpoint, by address and by name: refused in every mode, also
// where ALLOW_PRIVATE_DESTINATIONS opens link-local, shared and unique-local networks (most of these
// lie in them; 168.63.129.16 does not even look private). The one list; sources:
// - AWS EC2 instance metadata (IMDS): 169.254.169.254, fd00:ec2::254 (Nitro IPv6), names instance-data
//   and instance-data.ec2.internal (EC2 User Guide, "Access instance metadata").
// - AWS ECS task metadata and task-role credentials: 169.254.170.2 (ECS Developer Guide, "Task
//   metadata endpoint" v2, and AWS_CONTAINER_CREDENTIALS_RELATIVE_URI); no IPv6 address is documented,
//   IPv6-only tasks use the IMDS address above.
// - AWS EKS Pod Identity agent (credentials): 169.254.170.23, fd00:ec2::23 (EKS User Guide, "Set up the
//   Amazon EKS Pod Identity Agent").
// - Google Cloud metadata server: 169.254.169.254, fd20:ce::254 (IPv6-only instances), names
//   metadata.google.internal, metadata.goog and the short metadata (Compute Engine, "About VM metadata").
// - Azure Instance Metadata Service 169.254.169.254, and the WireServer 168.63.129.16 (Azure Virtual
//   Network, "What is IP address 168.63.129.16?").
// - Alibaba Cloud ECS metadata: 100.100.100.200 ("Instance metadata"), fd00:100::100:200 (IPv6, as the
//   cloud-init AliYun datasource reaches it).
// - Oracle Cloud: 169.254.169.254 (OCI, "Getting Instance Metadata"), fd00:c1::a9fe:a9fe (IPv6, the
//   endpoint of the OCI SDKs' instance-principals signer), and 192.0.0.192 (Oracle Cloud Classic).
// - OpenStack Nova metadata: 169.254.169.254, fe80::a9fe:a9fe (IPv6-only networks); DigitalOcean,
//   Hetzner Cloud, IBM Cloud and Huawei Cloud answer on 169.254.169.254 too.
// - Tencent Cloud: metadata.tencentyun.com, 169.254.0.23 ("Querying Instance Metadata").
// - Scaleway: 169.254.42.42, fd00:42::42 (cloud-init, "Scaleway" datasource).
// Link-local (169.254/16, fe80::/10) as a whole stays refused unless the operator allows private
// destinations; these never pass. IPv6 entries are written canonically (as new URL() prints them).
const METADATA_ENDPOINTS = [
  '169.254.169.254',
  'fd00:ec2::254',
  'instance-data',
  'instance-data.ec2.internal',
  '169.254.170.2',
  '169.254.170.23',
  'fd00:ec2::23',
  'fd20:ce::254',
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  '168.63.129.16',
  '100.100.100.200',
  'fd00:100::100:200',
  'fd00:c1::a9fe:a9fe',
  '192.0.0.192',
  'fe80::a9fe:a9fe',
  'metadata.tencentyun.com',
  '169.254.0.23',
  '169.254.42.42',
  'fd00:42::42',
] as const
const METADATA_ADDRESSES = new Set<string>(METADATA_ENDPOINTS.filter((entry) => net.isIP(entry) !== 0))
const METADATA_NAMES = new Set<string>(METADATA_ENDPOINTS.filter((entry) => net.isIP(entry) === 0))

/**
 * A host as it is compared and resolved, once, everywhere: without the brackets of an IPv6 literal,
 * lower case, without one trailing dot (`VM.` is the name `vm`, `metadata.google.internal.` the
 * metadata server), so that no spelling passes a check the plain name fails.
 */
export function normalizeHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '')
}

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

/** The 16 bytes of an IPv6 address in any spelling (`::`, an embedded dotted quad), as ipaddr.js reads it. */
function ipv6Bytes(address: string): number[] {
  return ipaddr.IPv6.parse(address).toByteArray()
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

/** Why an address is no destination under this policy, as "a private network address"; undefined if it is one. */
export function addressRefusal(address: string, allowPrivate: boolean): string | undefined {
  const found = classifyAddress(address)
  if (found === undefined || (allowPrivate && PRIVATE_CLASSES.has(found))) return undefined
  return DESCRIPTION[found]
}

/** Why a host (already normalised: normalizeHost) is no destination before any resolution; undefined if it may be one. */
export function hostRefusal(host: string, allowPrivate: boolean): string | undefined {
  if (net.isIP(host)) {
    const reason = addressRefusal(host, allowPrivate)
    return reason && `${host} is ${reason}`
  }
  if (host === '') return 'the URL has no host name'
  if (METADATA_NAMES.has(host)) return `${host} is ${DESCRIPTION.metadata}`
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost'))) return `${host} is ${DESCRIPTION.loopback}`
  return undefined
}
