import { randomBytes } from 'node:crypto'
import { mkdir, open, unlink, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { ServiceBusyError } from '../errors.js'

export interface SpoolLimits {
  /** Where bodies that outgrow memory are kept while they wait (UPLOAD_SPOOL_DIR). */
  dir: string
  /** Bytes of bodies this process keeps in memory at once; the rest go to disk (UPLOAD_SPOOL_MEMORY_BYTES). */
  memoryBytes: number
  /** Bytes of bodies this process holds at once, in memory and on disk (UPLOAD_SPOOL_MAX_BYTES). */
  processBytes: number
  /** Bytes of one account's bodies held at once (UPLOAD_SPOOL_ACCOUNT_MAX_BYTES). */
  accountBytes: number
}

// One body keeps at most this much in memory: a larger one is about to pass it anyway, and its
// bytes are better in the page cache than on the heap.
const BODY_MEMORY_BYTES = 1024 * 1024
// Bodies go to disk, and come back, in writes and reads of this size: what a body on disk holds in
// memory besides UPLOAD_SPOOL_MEMORY_BYTES.
const FILE_BLOCK_BYTES = 256 * 1024

/**
 * The bytes of upload bodies that have been received but not yet written to the database, counted
 * per process and per account: one account cannot fill the spool for the others, and the process's
 * memory and temporary disk stay within their bounds.
 */
export class SpoolBudget {
  private total = 0
  private inMemory = 0
  private receiving = 0
  private readonly perAccount = new Map<string, number>()

  constructor(readonly limits: SpoolLimits) {}

  /** Counts `bytes` more for `accountId`, or refuses with 503 (nothing counted) when a bound would pass. */
  take(accountId: string, bytes: number): void {
    const held = this.perAccount.get(accountId) ?? 0
    if (held + bytes > this.limits.accountBytes) {
      throw new ServiceBusyError(
        2,
        `This account's uploads waiting to be written hold more than ${this.limits.accountBytes} bytes ` +
          '(UPLOAD_SPOOL_ACCOUNT_MAX_BYTES); retry once some have been answered',
      )
    }
    if (this.total + bytes > this.limits.processBytes) {
      throw new ServiceBusyError(2, `The server is receiving more upload data than it can hold (UPLOAD_SPOOL_MAX_BYTES); retry in a moment`)
    }
    this.perAccount.set(accountId, held + bytes)
    this.total += bytes
  }

  give(accountId: string, bytes: number): void {
    const left = (this.perAccount.get(accountId) ?? bytes) - bytes
    if (left <= 0) this.perAccount.delete(accountId)
    else this.perAccount.set(accountId, left)
    this.total -= bytes
  }

  /** Whether `bytes` more may stay in memory; if so they are counted until `releaseMemory`. */
  holdInMemory(bytes: number): boolean {
    if (this.inMemory + bytes > this.limits.memoryBytes) return false
    this.inMemory += bytes
    return true
  }

  releaseMemory(bytes: number): void {
    this.inMemory -= bytes
  }

  /** Counts a body being received (from `UploadSpool.open` until it is finished or given back). */
  startReceiving(): () => void {
    this.receiving++
    let done = false
    return () => {
      if (done) return
      done = true
      this.receiving--
    }
  }

  get usage(): { bytes: number; memoryBytes: number; accounts: number; receiving: number } {
    return { bytes: this.total, memoryBytes: this.inMemory, accounts: this.perAccount.size, receiving: this.receiving }
  }
}

/**
 * One upload body, received whole before the upload takes a database connection: a slow client then
 * costs a socket and some disk, never a pool connection. Small bodies stay in memory; a larger one
 * goes to a file that is unlinked as soon as it is opened, so nothing is left behind by a crash.
 */
export class UploadSpool {
  private readonly memory: Buffer[] = []
  private memoryBytes = 0
  private file: FileHandle | undefined
  private fileBytes = 0
  private pending: Buffer[] = []
  private pendingBytes = 0
  private released = false
  private readonly received: () => void

  private constructor(
    private readonly budget: SpoolBudget,
    private readonly accountId: string,
  ) {
    this.received = budget.startReceiving()
  }

  /** An empty spool of `accountId`, counted in `budget`: `write` to it, then `finish`, or `release` it. */
  static open(budget: SpoolBudget, accountId: string): UploadSpool {
    return new UploadSpool(budget, accountId)
  }

  /** Reads `chunks` to their end into a spool; on any failure what was spooled is given back. */
  static async receive(chunks: AsyncIterable<Buffer>, budget: SpoolBudget, accountId: string): Promise<UploadSpool> {
    const spool = new UploadSpool(budget, accountId)
    try {
      for await (const chunk of chunks) await spool.write(chunk)
      await spool.finish()
      return spool
    } catch (error) {
      await spool.release()
      throw error
    }
  }

  /** The bytes written to the spool. */
  get bytes(): number {
    return this.memoryBytes + this.fileBytes + this.pendingBytes
  }

  /** The body again, from memory or from its file, in the order it arrived. */
  async *chunks(): AsyncGenerator<Buffer> {
    for (const chunk of this.memory) yield chunk
    if (!this.file) return
    for (let position = 0; position < this.fileBytes;) {
      const block = Buffer.allocUnsafe(Math.min(FILE_BLOCK_BYTES, this.fileBytes - position))
      const { bytesRead } = await this.file.read(block, 0, block.length, position)
      if (bytesRead === 0) throw new Error('The upload spool file ended early')
      position += bytesRead
      yield block.subarray(0, bytesRead)
    }
  }

  /** Gives the bytes back to the budget and closes the file; safe to call more than once. */
  async release(): Promise<void> {
    if (this.released) return
    this.released = true
    this.received()
    this.budget.give(this.accountId, this.bytes)
    this.budget.releaseMemory(this.memoryBytes)
    await this.file?.close()
  }

  /** Adds `chunk`; refuses with 503 (ServiceBusyError) when the account's or the process's bound would pass. */
  async write(chunk: Buffer): Promise<void> {
    this.budget.take(this.accountId, chunk.length)
    if (!this.file && this.memoryBytes + chunk.length <= BODY_MEMORY_BYTES && this.budget.holdInMemory(chunk.length)) {
      this.memory.push(chunk)
      this.memoryBytes += chunk.length
      return
    }
    if (!this.file) {
      try {
        this.file = await openSpoolFile(this.budget.limits.dir)
      } catch (error) {
        // Counted above but kept nowhere: given back here, since release() gives back what is kept.
        this.budget.give(this.accountId, chunk.length)
        diskTrouble(error)
      }
    }
    this.pending.push(chunk)
    this.pendingBytes += chunk.length
    if (this.pendingBytes >= FILE_BLOCK_BYTES) await this.flushPending()
  }

  /** Writes what is still buffered: call once the last chunk is in, before reading it back. */
  async finish(): Promise<void> {
    await this.flushPending()
    this.received()
  }

  private async flushPending(): Promise<void> {
    if (!this.file || this.pendingBytes === 0) return
    const block = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes)
    const bytes = this.pendingBytes
    this.pending = []
    this.pendingBytes = 0
    // Counted on disk before the write, so that a failed write still gives them back on release.
    this.fileBytes += bytes
    for (let offset = 0; offset < bytes;) {
      const { bytesWritten } = await this.file.write(block, offset, bytes - offset, this.fileBytes - bytes + offset).catch(diskTrouble)
      offset += bytesWritten
    }
  }
}

/** A full or failing temporary disk is the server's trouble, not the client's: 503, try again later. */
function diskTrouble(error: unknown): never {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  throw new ServiceBusyError(5, `The server could not keep the upload body while it waits (${code ?? 'disk error'}); nothing was written, retry in a moment`)
}

async function openSpoolFile(dir: string): Promise<FileHandle> {
  await mkdir(dir, { recursive: true })
  const name = path.join(dir, `upload-${process.pid}-${randomBytes(8).toString('hex')}`)
  const file = await open(name, 'wx+', 0o600)
  // Open and unlinked: the file lives until it is closed, and a process that dies leaves nothing.
  try {
    await unlink(name)
  } catch (error) {
    await file.close()
    throw error
  }
  return file
}
