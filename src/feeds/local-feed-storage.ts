import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createWriteStream, type WriteStream } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import type { Writable } from 'node:stream'
import type { FeedEncoding, FeedFileWriter, FeedStorage, StoredFeed } from './feed-storage.js'
import { ParallelGzip } from './parallel-gzip.js'

// The gzip representation of <dir>/<channel>/<pid>/<name> is <dir>/<channel>/<pid>/.gzip/<name>:
// no file name of a channel starts with a dot, so the two never meet.
const GZIP_DIR = '.gzip'

/**
 * Feed files in a directory of this host (DATA_DIR/feeds), one file per key at <dir>/<key>: keys
 * are `channel/pid/filename`, so every export has a directory of its own. A file is written beside
 * its final name and renamed into place, so a reader sees a whole file or none. Its gzip
 * representation is compressed as it is written (zlib on libuv's thread pool, beside the export's
 * COPY), once per export: downloads never compress.
 */
export class LocalFeedStorage implements FeedStorage {
  private readonly root: string

  constructor(dir: string) {
    this.root = path.resolve(dir)
  }

  async create(key: string): Promise<FeedFileWriter> {
    const finalPath = this.pathOf(key)
    if (finalPath === undefined) throw new Error(`not a feed storage key: ${JSON.stringify(key)}`)
    // Another writer of the same export that abandons its last file removes the directories it leaves
    // empty, which can fall between this writer's mkdir and its open (ENOENT): they are made again.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.createIn(path.dirname(finalPath), finalPath)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 5) throw error
      }
    }
  }

  private async createIn(dir: string, finalPath: string): Promise<FeedFileWriter> {
    await fs.mkdir(path.join(dir, GZIP_DIR), { recursive: true })
    let gzip: LocalFeedFile | undefined
    try {
      gzip = await LocalFeedFile.open(gzipPathOf(finalPath), { inExportDirectory: true, gzip: true })
      return new RepresentedFeedFile(await LocalFeedFile.open(finalPath, { inExportDirectory: true }), gzip)
    } catch (error) {
      await gzip?.abandon()
      // The export's directory may have been made for this file alone; rmdir leaves it while it holds others.
      await fs.rmdir(path.join(dir, GZIP_DIR)).catch(() => {})
      await fs.rmdir(dir).catch(() => {})
      throw error
    }
  }

  async open(key: string, encoding: FeedEncoding = 'identity'): Promise<StoredFeed | undefined> {
    const keyPath = this.pathOf(key)
    if (keyPath === undefined) return undefined
    const filePath = encoding === 'gzip' ? gzipPathOf(keyPath) : keyPath
    let handle: fs.FileHandle
    try {
      handle = await fs.open(filePath, 'r')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
    try {
      const { size } = await handle.stat()
      return { size, stream: (range) => handle.createReadStream(range ?? {}), close: () => handle.close() }
    } catch (error) {
      await handle.close().catch(() => {})
      throw error
    }
  }

  async remove(keys: readonly string[]): Promise<void> {
    const dirs = new Set<string>()
    for (const key of keys) {
      const filePath = this.pathOf(key)
      if (filePath === undefined) continue
      await fs.rm(gzipPathOf(filePath), { force: true })
      await fs.rm(filePath, { force: true })
      dirs.add(path.dirname(filePath))
    }
    // An export's directory holds only its own files; rmdir fails harmlessly while one is left.
    for (const dir of dirs) {
      await fs.rmdir(path.join(dir, GZIP_DIR)).catch(() => {})
      await fs.rmdir(dir).catch(() => {})
    }
  }

  async removePrefix(prefix: string): Promise<void> {
    // The empty prefix would be every file of every channel: never what a caller means.
    if (prefix === '' || prefix === '/') throw new Error('removePrefix needs a non-empty prefix')
    const target = this.pathOf(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix)
    if (target === undefined) return
    if (prefix.endsWith('/')) {
      await fs.rm(target, { recursive: true, force: true })
      return
    }
    // A prefix that ends inside a name: the entries of its directory whose names start with it.
    const dir = path.dirname(target)
    const start = path.basename(target)
    const names = await fs.readdir(dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return []
      throw error
    })
    for (const name of names) if (name.startsWith(start)) await fs.rm(path.join(dir, name), { recursive: true, force: true })
  }

  /** The file of a key, or undefined for a key that would leave the directory: no other file is ever touched. */
  private pathOf(key: string): string | undefined {
    const filePath = path.resolve(this.root, key)
    return filePath.startsWith(this.root + path.sep) ? filePath : undefined
  }
}

function gzipPathOf(filePath: string): string {
  return path.join(path.dirname(filePath), GZIP_DIR, path.basename(filePath))
}

/** Both representations of one file, written from the same chunks and published together. */
class RepresentedFeedFile implements FeedFileWriter {
  constructor(
    private readonly identity: LocalFeedFile,
    private readonly gzip: LocalFeedFile,
  ) {}

  async write(chunk: Buffer): Promise<void> {
    await Promise.all([this.identity.write(chunk), this.gzip.write(chunk)])
  }

  async close(): Promise<void> {
    await Promise.all([this.identity.close(), this.gzip.close()])
  }

  /** The gzip file first: once the plain one is at its key, so is its compressed twin. */
  async publish(): Promise<void> {
    await this.gzip.publish()
    await this.identity.publish()
  }

  async abandon(): Promise<void> {
    // The gzip directory first, so that the export's directory can go with the plain file.
    await this.gzip.abandon()
    await this.identity.abandon()
  }
}

/**
 * One file being written at `.tmp-<random>-<name>` beside its final path (the name cut short, so
 * that any final name the file system takes has a temporary one), renamed into place by publish.
 */
export class LocalFeedFile implements FeedFileWriter {
  private readonly stream: WriteStream
  /** Where chunks go: the file itself, or a gzip stream piped into it. */
  private readonly input: Writable
  private failure: Error | undefined
  private closed = false

  private constructor(
    readonly finalPath: string,
    readonly tmpPath: string,
    private readonly inExportDirectory: boolean,
    gzip: boolean,
  ) {
    // `wx`: never write into a file someone else has; `flush`: data on disk before the rename.
    this.stream = createWriteStream(tmpPath, { flags: 'wx', flush: true })
    this.stream.on('error', (error) => {
      this.failure ??= error
      // A gzip stream whose file failed would wait for a drain that never comes.
      if (this.input !== this.stream) this.input.destroy(error)
    })
    // The fastest level: a feed is compressed once per export, and most of what gzip saves on a
    // feed's repetitive text it saves at any level.
    const compressor = gzip ? new ParallelGzip() : undefined
    compressor?.on('error', (error) => {
      this.failure ??= error
      this.stream.destroy(error)
    })
    compressor?.pipe(this.stream)
    this.input = compressor ?? this.stream
  }

  /**
   * Creates the temporary file; fails (leaving nothing) when it cannot be created. `inExportDirectory`:
   * the directory holds one export's files only, and goes when its last file is abandoned.
   */
  static async open(finalPath: string, { inExportDirectory = false, gzip = false } = {}): Promise<LocalFeedFile> {
    const tmpPath = path.join(path.dirname(finalPath), `.tmp-${randomBytes(8).toString('hex')}-${path.basename(finalPath).slice(0, 200)}`)
    const file = new LocalFeedFile(finalPath, tmpPath, inExportDirectory, gzip)
    try {
      if (file.stream.pending) await once(file.stream, 'open')
    } catch (error) {
      await file.abandon()
      throw error
    }
    return file
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.failure) throw this.failure
    if (chunk.length === 0) return
    // `once` rejects on 'error', so a failing disk ends the wait.
    if (!this.input.write(chunk)) await once(this.input, 'drain')
  }

  async close(): Promise<void> {
    if (this.failure) throw this.failure
    const closed = once(this.stream, 'close')
    // Ending the gzip stream flushes it and, through the pipe, ends the file.
    this.input.end()
    await closed
    if (this.failure) throw this.failure
    this.closed = true
  }

  /** A rename, so a reader sees the old file or the new one, never half of one. */
  async publish(): Promise<void> {
    await fs.rename(this.tmpPath, this.finalPath)
  }

  async abandon(): Promise<void> {
    if (!this.stream.closed) {
      const closed = once(this.stream, 'close').catch(() => {})
      if (this.input !== this.stream) this.input.destroy()
      this.stream.destroy()
      await closed
    }
    await fs.rm(this.tmpPath, { force: true }).catch(() => {})
    // A complete file may have been published already; one that failed halfway never was.
    if (this.closed) await fs.rm(this.finalPath, { force: true }).catch(() => {})
    // The export's directory, once its last file is gone (rmdir fails harmlessly while one is left).
    if (this.inExportDirectory) await fs.rmdir(path.dirname(this.finalPath)).catch(() => {})
  }
}
