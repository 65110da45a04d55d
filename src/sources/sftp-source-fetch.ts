import fs from 'node:fs/promises'
import type SftpClient from 'ssh2-sftp-client'
import type { FetchedSourceSettings } from '../db/schema.js'
import { loginSftp, sftpFailureOf } from '../feeds/sftp-login.js'
import { OutboundRefusedError } from '../net/outbound-guard.js'
import { digestOf, pastDeadline, SourceFetchError, type SourceToFetch, type WrittenFile } from './fetch-parts.js'

// A file on an SFTP server: the host key checked before the login (the same login as a channel's
// SFTP pushes), then the file's size and modification time compared with the last fetch's, and only
// a changed file downloaded, with many reads in flight.

type SftpSettings = Extract<FetchedSourceSettings, { kind: 'sftp' }>

// Reads in flight and their size: ssh2's fastGet with 64 × 32 KiB, as the pushes' writes measured.
const READS_IN_FLIGHT = 64
const READ_BYTES = 32 * 1024

export async function fetchBySftp(source: SourceToFetch, settings: SftpSettings, target: string): Promise<WrittenFile | 'unchanged'> {
  const { budget } = source
  const address = await addressOf(source, settings.host)
  let client: SftpClient | undefined
  let timer: NodeJS.Timeout | undefined
  // Past the deadline: a login that completes after it reads nothing.
  let stopped = false
  const cut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        stopped = true
        void client?.end().catch(() => {})
        reject(pastDeadline(budget))
      },
      Math.max(0, budget.deadline - Date.now()),
    )
  })
  const work = async (): Promise<WrittenFile | 'unchanged'> => {
    const login = await loginSftp({
      address,
      port: settings.port,
      user: settings.user,
      hostKeySha256: settings.host_key_sha256,
      credentials: source.credentials,
      timeoutMs: Math.min(budget.idleMs, Math.max(1, budget.deadline - Date.now())),
      nothingDone: 'nothing was read',
    })
    if ('failed' in login) throw new SourceFetchError(login.failed.ok ? 'the login failed' : login.failed.error)
    client = login.client
    if (stopped) {
      await client.end().catch(() => {})
      throw pastDeadline(budget)
    }
    try {
      return await download(client, settings.path, target, source)
    } finally {
      await client.end().catch(() => {})
    }
  }
  try {
    const working = work()
    // Ended by the deadline, the work still ends later, with an error no one waits for.
    working.catch(() => {})
    return await Promise.race([working, cut])
  } finally {
    clearTimeout(timer)
  }
}

async function download(client: SftpClient, remotePath: string, target: string, { budget, state }: SourceToFetch): Promise<WrittenFile | 'unchanged'> {
  let stat: Awaited<ReturnType<SftpClient['stat']>>
  try {
    stat = await client.stat(remotePath)
  } catch (error) {
    throw readFailure(error, remotePath)
  }
  if (!stat.isFile) throw new SourceFetchError(`${remotePath} on the server is not a file`)
  if (state?.size === stat.size && state.mtime === stat.modifyTime) return 'unchanged'
  if (stat.size > budget.maxBytes) throw new SourceFetchError(`the file is ${stat.size} bytes, larger than ${budget.maxBytes} (SOURCE_MAX_BYTES)`)
  let after: Awaited<ReturnType<SftpClient['stat']>>
  try {
    await client.fastGet(remotePath, target, { concurrency: READS_IN_FLIGHT, chunkSize: READ_BYTES })
    after = await client.stat(remotePath)
  } catch (error) {
    throw readFailure(error, remotePath)
  }
  // A file written in place while it was read (an export still running on the server) is a part of
  // one: imported, it would remove every product it has not reached yet.
  const { size: read } = await fs.stat(target)
  if (after.size !== stat.size || after.modifyTime !== stat.modifyTime || read !== stat.size) {
    throw new SourceFetchError(
      `${remotePath} changed on the server while it was read (${stat.size} bytes, then ${after.size}); it is read again at the next import`,
    )
  }
  const sha256 = await digestOf(target)
  return { bytes: stat.size, sha256, state: { size: stat.size, mtime: stat.modifyTime, sha256 } }
}

async function addressOf(source: SourceToFetch, host: string): Promise<string> {
  try {
    return await source.guard.addressOf(host)
  } catch (error) {
    if (error instanceof OutboundRefusedError) throw new SourceFetchError(`${host} is not allowed: ${error.reason}`)
    throw new SourceFetchError(`could not resolve ${host}`)
  }
}

function readFailure(error: unknown, remotePath: string): SourceFetchError {
  if (error instanceof SourceFetchError) return error
  const found = sftpFailureOf(error)
  if ('broken' in found) return new SourceFetchError(`the download of ${remotePath} broke off: ${found.broken}`)
  if (found.refused === 'missing') return new SourceFetchError(`the server has no file ${remotePath}`)
  return new SourceFetchError(`the server refused to read ${remotePath}: permission denied`)
}
