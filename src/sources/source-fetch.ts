import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { SourceFetchState } from '../db/schema.js'
import type { SourceToFetch } from './fetch-parts.js'
import { fetchByHttp } from './http-source-fetch.js'
import { fetchBySftp } from './sftp-source-fetch.js'

export { SourceFetchError, type FetchBudget, type SourceToFetch } from './fetch-parts.js'

// Fetches a source's file into a file on local disk, within its bounds: the network and
// the database never wait on each other (a slow server holds no connection of the database), and
// the digest of what arrived tells a file that has not changed, whatever the server's validators say.

/** A file fetched to local disk; `remove` deletes it and its directory. */
export interface SpooledFile {
  path: string
  bytes: number
  sha256: string
  /** What tells this file from a changed one at the next fetch. */
  state: SourceFetchState
  /** The charset its server declared for it (HTTP), if any. */
  charset?: string
  remove(): Promise<void>
}

/** The file, or `unchanged` when the server's validators or its size and time (SFTP) say it has not changed. */
export type FetchOutcome = { unchanged: true } | { unchanged: false; file: SpooledFile }

export async function fetchSourceFile(source: SourceToFetch): Promise<FetchOutcome> {
  const directory = await mkdtemp(path.join(tmpdir(), 'catalog-source-'))
  const remove = () => rm(directory, { recursive: true, force: true })
  const target = path.join(directory, 'file')
  try {
    const fetched =
      source.settings.kind === 'feed_url' ? await fetchByHttp(source, source.settings, target) : await fetchBySftp(source, source.settings, target)
    if (fetched === 'unchanged') {
      await remove()
      return { unchanged: true }
    }
    return { unchanged: false, file: { path: target, ...fetched, remove } }
  } catch (error) {
    await remove()
    throw error
  }
}
