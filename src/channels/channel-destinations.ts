import { isDeepStrictEqual } from 'node:util'
import type { CredentialBox } from '../auth/credential-box.js'
import type { DbHandle } from '../db/database.js'
import type { ChannelDestination, FileServerSettings } from '../db/schema.js'
import { BadRequestError } from '../errors.js'
import { newFeedToken } from '../feeds/feed-urls.js'
import type { OutboundGuard } from '../net/outbound-guard.js'
import type { DestinationConfig } from './channel-input.js'

// A channel's destinations as stored: a feed URL's token, an http destination's URL, a file server's
// settings and its credentials sealed. Credentials are write-only: a file server given
// again without them keeps those stored for the same login (sameLogin below).

/** What saving a channel's destinations needs beside the database: the outbound guard and the key that seals credentials. */
export interface Connectors {
  guard: OutboundGuard
  credentials: CredentialBox
}

/** The row of a destination to store (a copied one carries its sealed credentials as they are). */
type StoredDestination = Pick<ChannelDestination, 'kind' | 'name' | 'active' | 'url' | 'settings' | 'sealed_credentials'>

/** Replaces the channel's destinations; new credentials are sealed, omitted ones kept from the destination they belong to. */
export async function replaceDestinations(
  db: DbHandle,
  target: { accountId: string; channelId: string },
  destinations: DestinationConfig[],
  credentials: CredentialBox,
): Promise<void> {
  const stored = await db.selectFrom('channel_destination').selectAll().where('channel_id', '=', target.channelId).execute()
  const rows = destinations.map((d, i): StoredDestination => {
    if (!d.file) return { kind: d.kind, name: d.name, active: d.active, url: d.url, settings: null, sealed_credentials: null }
    const { settings } = d.file
    const given = d.file.credentials
    const kept = stored.find((s) => s.kind === d.kind && s.settings !== null && sameLogin(s.settings, settings))
    const sealed = given ? credentials.seal(JSON.stringify(given)) : kept?.sealed_credentials
    if (!sealed) {
      const needed = d.kind === 'sftp' ? 'password or private_key' : 'password'
      throw new BadRequestError(`destinations[${i}].password: a ${needed} is required for a new ${d.kind} login`)
    }
    return { kind: d.kind, name: d.name, active: d.active, url: null, settings, sealed_credentials: sealed }
  })
  await storeDestinations(db, target, rows)
}

/**
 * Whether stored credentials may serve a destination as given again: the same server and user, and
 * nothing that would expose them otherwise (plain FTP instead of TLS, another host key or
 * certificate pin). Anything else asks for them again.
 */
function sameLogin(stored: FileServerSettings, given: FileServerSettings): boolean {
  return (
    stored.host === given.host &&
    stored.port === given.port &&
    stored.user === given.user &&
    stored.host_key_sha256 === given.host_key_sha256 &&
    (stored.insecure ?? false) === (given.insecure ?? false) &&
    stored.tls_certificate_sha256 === given.tls_certificate_sha256
  )
}

/** Site copy: the destinations of a channel for its copy, credentials as they are sealed. */
export async function copyDestinations(db: DbHandle, accountId: string, fromChannelId: string, toChannelId: string): Promise<void> {
  const rows = await db.selectFrom('channel_destination').selectAll().where('channel_id', '=', fromChannelId).orderBy('id').execute()
  await storeDestinations(db, { accountId, channelId: toChannelId }, rows)
}

/**
 * Stores a channel's destinations as given. One given again unchanged (a feed URL, the same http
 * URL, a file server with the same settings) keeps its row: its id, its feed URL's token and the
 * pushes queued for it. A channel saved with its destinations sent back as they were must not
 * move its feed URL, which a merchant has given to Google, nor drop a delivery being retried.
 */
async function storeDestinations(db: DbHandle, { accountId, channelId }: { accountId: string; channelId: string }, rows: StoredDestination[]): Promise<void> {
  const stored = await db.selectFrom('channel_destination').selectAll().where('channel_id', '=', channelId).orderBy('id').execute()
  const unused = new Set(stored)
  const kept: { id: string; row: StoredDestination }[] = []
  const added: StoredDestination[] = []
  for (const row of rows) {
    const same = [...unused].find((candidate) => sameDestination(candidate, row))
    if (same === undefined) added.push(row)
    else {
      unused.delete(same)
      kept.push({ id: same.id, row })
    }
  }
  const gone = [...unused].map((row) => row.id)
  if (gone.length > 0) await db.deleteFrom('channel_destination').where('id', 'in', gone).execute()
  for (const { id, row } of kept) {
    await db
      .updateTable('channel_destination')
      .set({ name: row.name, active: row.active, sealed_credentials: row.sealed_credentials })
      .where('id', '=', id)
      .execute()
  }
  if (added.length === 0) return
  await db
    .insertInto('channel_destination')
    .values(
      added.map((d) => ({
        account_id: accountId,
        channel_id: channelId,
        kind: d.kind,
        name: d.name,
        active: d.active,
        url: d.url,
        token: d.kind === 'feed' ? newFeedToken() : null,
        settings: d.settings === null ? null : JSON.stringify(d.settings),
        sealed_credentials: d.sealed_credentials,
      })),
    )
    .execute()
}

/** The same destination given again: a feed URL, the same http URL, or a file server with the same settings. */
function sameDestination(stored: ChannelDestination, given: StoredDestination): boolean {
  if (stored.kind !== given.kind) return false
  if (given.kind === 'feed') return true
  if (given.kind === 'http') return stored.url === given.url
  // As stored: JSON keeps no member that is undefined.
  return stored.settings !== null && given.settings !== null && isDeepStrictEqual(stored.settings, JSON.parse(JSON.stringify(given.settings)))
}

/**
 * Seals every stored credential again with the current key (after CREDENTIALS_KEY changed, the old
 * key in CREDENTIALS_KEYS_PREVIOUS): those of channels' file server destinations and of sites'
 * fetched sources. Returns how many were resealed. Each row in its own statement, only if it still
 * holds what was read, so a change saved meanwhile is never overwritten.
 */
export async function resealCredentials(db: DbHandle, credentials: CredentialBox): Promise<number> {
  let resealed = 0
  for (const table of ['channel_destination', 'data_source'] as const) {
    const rows = await db.selectFrom(table).select(['id', 'sealed_credentials']).where('sealed_credentials', 'is not', null).execute()
    for (const row of rows) {
      const sealed = row.sealed_credentials!
      if (credentials.isCurrent(sealed)) continue
      const result = await db
        .updateTable(table)
        .set({ sealed_credentials: credentials.seal(credentials.open(sealed)) })
        .where('id', '=', row.id)
        .where('sealed_credentials', '=', sealed)
        .executeTakeFirst()
      resealed += Number(result.numUpdatedRows)
    }
  }
  return resealed
}
