import type { TLSSocket } from 'node:tls'
import { Client, FTPError, enterPassiveModeIPv6 } from 'basic-ftp'
import { openPushFile, type PushFile } from './http-push.js'
import { failure, networkReason, remotePaths, withinDeadline, type DeliveryOptions, type DeliveryResult, type FileServerTarget } from './file-server-push.js'

// Uploads a file to an FTP server over explicit TLS (AUTH TLS, then the login), or in the clear only
// when the destination says `insecure`. The server's certificate is verified against the system's
// authorities, or, when the destination pins one (`tls_certificate_sha256`), against that pin, before
// the password is sent. Data connections use EPSV: they go to the address the control connection
// reached (the one the outbound guard checked), never to an address the server names.

export async function sendByFtps(target: FileServerTarget, file: PushFile, options: DeliveryOptions): Promise<DeliveryResult> {
  const client = new Client(options.timeoutMs)
  client.prepareTransfer = enterPassiveModeIPv6
  const { final, upload } = remotePaths(target.settings, file.filename, options.uploadTag)
  return withinDeadline(
    options,
    () => client.close(),
    async () => {
      try {
        const refused = await logIn(client, target)
        if (refused) return refused
        const delivered = await put(client, file, { final, upload })
        if (delivered.ok && options.removeAfter) await client.remove(final)
        return delivered
      } catch (error) {
        return ftpFailure(error, final)
      } finally {
        client.close()
      }
    },
  )
}

/** Connects, secures the connection and checks the certificate, then logs in; a refusal is returned, a network failure thrown. */
async function logIn(client: Client, { settings, credentials, address }: FileServerTarget): Promise<DeliveryResult | undefined> {
  await client.connect(address, settings.port)
  if (!settings.insecure) {
    const pinned = settings.tls_certificate_sha256
    try {
      await client.useTLS({ servername: settings.host, rejectUnauthorized: pinned === undefined })
    } catch (error) {
      if (!(error instanceof FTPError)) throw error
      return failure(
        'refused',
        `the server refused TLS (AUTH TLS answered ${error.code}); nothing was sent. Set insecure: true only if plain FTP is acceptable`,
        false,
      )
    }
    const presented = (client.ftp.socket as TLSSocket).getPeerCertificate().fingerprint256
    if (pinned !== undefined && presented !== pinned) {
      return failure('refused', `the server's TLS certificate is ${presented}, not the ${pinned} the destination pins; nothing was sent`, false)
    }
  }
  try {
    await client.login(settings.user, credentials.password)
  } catch (error) {
    if (error instanceof FTPError && error.code === 530) return failure('refused', 'the server refused the login (user or password); nothing was sent', false)
    throw error
  }
  await client.useDefaultSettings()
  return undefined
}

async function put(client: Client, file: PushFile, paths: { final: string; upload: string }): Promise<DeliveryResult> {
  const body = await openPushFile(file)
  if (!body) return failure('missing', `the file ${file.filename} is no longer there`, false)
  try {
    await client.uploadFrom(body.stream, paths.upload)
    if (paths.upload !== paths.final) await client.rename(paths.upload, paths.final)
    return { ok: true, bytes: body.size, remotePath: paths.final }
  } catch (error) {
    if (paths.upload !== paths.final) await client.remove(paths.upload, true).catch(() => {})
    throw error
  }
}

const DROPPED = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT', 'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH'])

function ftpFailure(error: unknown, remotePath: string): DeliveryResult {
  if (error instanceof FTPError) {
    // 5xx: the server refused (permission, no such directory); 4xx: a transient refusal, tried again.
    const permanent = error.code >= 500
    return failure(permanent ? 'refused' : 'status', `the server answered ${error.code} for ${remotePath}`, !permanent, remotePath)
  }
  const { code, message } = error as { code?: string; message?: string }
  // A connection that drops, even in the TLS handshake ("… disconnected before secure TLS connection
  // was established"), is the network's to blame, and tried again; a certificate's fault is not.
  const dropped = code !== undefined && DROPPED.has(code)
  if (!dropped && (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || /certificate|self.signed|SSL|TLS/i.test(message ?? ''))) {
    return failure('refused', `the server's TLS certificate was not accepted (${code ?? 'TLS'}); pin it with tls_certificate_sha256, or fix it`, false)
  }
  return failure('unreachable', `the transfer of ${remotePath} broke off: ${networkReason(code, message)}`, true, remotePath)
}
