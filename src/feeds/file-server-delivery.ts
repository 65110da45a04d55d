import type { CredentialBox } from '../auth/credential-box.js'
import type { DbHandle } from '../db/database.js'
import type { FileCredentials } from '../db/schema.js'
import { OutboundRefusedError, type OutboundGuard } from '../net/outbound-guard.js'
import { failure, type DeliveryOptions, type DeliveryResult, type FileServerTarget } from './file-server-push.js'
import { sendByFtps } from './ftps-push.js'
import type { PushFile } from './http-push.js'
import { sendBySftp } from './sftp-push.js'

export interface FileServerDelivery extends DeliveryOptions {
  guard: OutboundGuard
  credentials: CredentialBox
}

/**
 * Sends a file to a channel's SFTP or FTPS destination, once: its settings and credentials as they
 * are now (a corrected password serves the retries), its host checked by the outbound guard and
 * connected to by the address checked. Never throws.
 */
export async function sendToFileServer(
  db: DbHandle,
  destination: { accountId: string; destinationId: string | null },
  file: PushFile,
  options: FileServerDelivery,
): Promise<DeliveryResult> {
  const row =
    destination.destinationId === null
      ? undefined
      : await db
          .selectFrom('channel_destination')
          .select(['kind', 'settings', 'sealed_credentials'])
          .where('account_id', '=', destination.accountId)
          .where('id', '=', destination.destinationId)
          .executeTakeFirst()
  if (!row?.settings || !row.sealed_credentials || (row.kind !== 'sftp' && row.kind !== 'ftps')) {
    return failure('missing', 'the destination was removed from the channel before the file could be sent', false)
  }
  let credentials: FileCredentials
  try {
    credentials = JSON.parse(options.credentials.open(row.sealed_credentials)) as FileCredentials
  } catch (error) {
    return failure('refused', `the destination's credentials could not be opened: ${(error as Error).message}`, false)
  }
  let address: string
  try {
    address = await options.guard.addressOf(row.settings.host)
  } catch (error) {
    if (error instanceof OutboundRefusedError) return failure('refused', `${row.settings.host} is not allowed: ${error.reason}`, false)
    return failure('unreachable', `${row.settings.host} could not be resolved`, true)
  }
  const target: FileServerTarget = { settings: row.settings, credentials, address }
  return row.kind === 'sftp' ? sendBySftp(target, file, options) : sendByFtps(target, file, options)
}
