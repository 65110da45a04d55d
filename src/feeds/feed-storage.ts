import fs from 'node:fs/promises'
import path from 'node:path'

// Feed files on local disk under DATA_DIR/feeds (DESIGN.md section 8: one small storage interface;
// an object store can replace it without touching callers). Every export writes under a key of its
// own (channel/pid/filename), so the files a reader is served never change under it: the database
// row that names the current key switches in one commit, and old keys are removed afterwards.

export function feedsDir(dataDir: string): string {
  return path.join(dataDir, 'feeds')
}

export function storagePath(dataDir: string, storageKey: string): string {
  return path.join(feedsDir(dataDir), storageKey)
}

export function storageKeyOf(channelId: string, pid: string, filename: string): string {
  return `${channelId}/${pid}/${filename}`
}

/** Removes files no row points at any more; a file that is already gone is fine. */
export async function removeFeedFiles(dataDir: string, storageKeys: string[]): Promise<void> {
  const dirs = new Set<string>()
  for (const key of storageKeys) {
    await fs.rm(storagePath(dataDir, key), { force: true })
    dirs.add(path.dirname(storagePath(dataDir, key)))
  }
  // An export's directory holds only its own files; rmdir fails harmlessly while one is left.
  for (const dir of dirs) await fs.rmdir(dir).catch(() => {})
}
