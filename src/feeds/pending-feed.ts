import { Readable } from 'node:stream'
import type { Db } from '../db/database.js'
import { inTransaction } from '../db/transaction.js'
import { fileBudget, linesOfFile, materialiseFeedFile, unwrittenFile, type MaterialiseGate, type RecordedFeedFile } from './feed-materialiser.js'
import type { FeedFileWriter, FeedStorage, StoredFeed } from './feed-storage.js'
import { writeFeedPlan } from './feed-writer.js'

// A whole identity download of a full file not written yet is served straight from the channel
// stage's lines: one COPY in key order, as the file would be written, sent as it comes.
// The file is written to the storage once that download is over, for gzip clients, ranges and
// every later download. Measured at 300,000 rows (125 MB) on 2 cores: a first download that also
// compressed and stored the file as it went took 1.6-2.4 s against 0.6-0.8 s for a download of the
// stored file, all of it the CPU compression takes; served from the lines alone, 0.98 s (the
// stored file's download inflates it, which this one does not need).
//
// A download holds the COPY (and its connection and snapshot) only while it keeps taking bytes: the
// COPY waits for a download that has LAG_BYTES waiting for it, and one that does not take them within
// STALL_MS gets the rest from the storage once the file is written.

const LAG_BYTES = 8 * 1024 * 1024
const STALL_MS = 5_000

/** The identity bytes of a pending full file, as they are read (`size` of them, as its export recorded them). */
class PendingFeedBody extends Readable {
  sent = 0
  private rest: Readable | undefined
  private wake: (() => void) | undefined

  constructor(readonly size: number) {
    super({ highWaterMark: 1024 * 1024 })
  }

  /** Continues from the stored file, from the first byte not sent yet. */
  continueWith(rest: Readable): void {
    this.rest = rest
    rest.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) rest.pause()
    })
    rest.on('end', () => this.push(null))
    rest.on('error', (error) => this.destroy(error))
  }

  /** Resolves true once the client has taken most of what waits for it, false after `ms` without that. */
  roomWithin(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined
        resolve(false)
      }, ms)
      this.wake = () => {
        clearTimeout(timer)
        this.wake = undefined
        resolve(true)
      }
    })
  }

  override _read(): void {
    this.wake?.()
    this.rest?.resume()
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.wake?.()
    this.rest?.destroy()
    callback(error)
  }
}

class FellBehind extends Error {}
class DownloadGone extends Error {}

/** The lines' bytes into the body, as fast as its client takes them, unless it has gone or stalled. */
function bodyWriter(body: PendingFeedBody, onFirstByte: () => void): FeedFileWriter {
  return {
    write: async (chunk) => {
      if (body.readableLength > LAG_BYTES && !(await body.roomWithin(STALL_MS))) throw new FellBehind()
      if (body.destroyed) throw new DownloadGone()
      onFirstByte()
      body.sent += chunk.length
      body.push(chunk)
    },
    close: async () => {
      // The export measured the file: another size is not the file its headers announced.
      if (body.sent !== body.size) throw new Error(`the file has ${body.sent} bytes where its export recorded ${body.size}`)
      body.push(null)
    },
    publish: async () => {},
    abandon: async () => {},
  }
}

type Outcome = 'sent' | 'written' | 'behind' | 'gone'

/**
 * A pending full file's identity bytes (`bytes` of them, as its export recorded) for one whole
 * download, read from its channel stage as they are sent; undefined when the file is written
 * already (serve the stored one). Fails as a stored file's opening would (a 429 of the gate
 * included) until its first byte; after it, a failure ends the body with an error.
 */
export async function openPendingFeed(
  db: Db,
  storage: FeedStorage,
  file: RecordedFeedFile & { bytes: number },
  gate?: MaterialiseGate,
): Promise<StoredFeed | undefined> {
  const body = new PendingFeedBody(file.bytes)
  let started = false
  let announce: (serving: boolean) => void = () => {}
  const ready = new Promise<boolean>((resolve) => (announce = resolve))
  let outcome: Outcome = 'gone'
  const work = async (): Promise<void> => {
    outcome = await sendLines(db, file, body, () => {
      started = true
      announce(true)
    })
  }
  const sending = gate ? gate(file.accountId, work) : work()
  const done = sending.then(() => afterSending(db, storage, { file, body, outcome, gate }))
  // Before the first byte, a failure is the request's to answer; after it, the body's.
  const first = await Promise.race([ready, done.then(() => started)])
  if (!first) {
    body.destroy()
    return undefined
  }
  done.catch((error: unknown) => body.destroy(error instanceof Error ? error : new Error(String(error))))
  return { size: file.bytes, stream: () => body, close: async () => void body.destroy() }
}

/** The COPY of the file's lines into the body, in the snapshot its row is read in. */
async function sendLines(db: Db, file: RecordedFeedFile, body: PendingFeedBody, onFirstByte: () => void): Promise<Outcome> {
  try {
    return await inTransaction(
      db,
      async (tx) => {
        const row = await unwrittenFile(tx, file)
        if (!row) return 'written'
        await writeFeedPlan(tx.client, linesOfFile(row), bodyWriter(body, onFirstByte), fileBudget(db, row), { etag: false })
        return 'sent'
      },
      { isolation: 'repeatable read' },
    )
  } catch (error) {
    if (error instanceof FellBehind) return 'behind'
    if (error instanceof DownloadGone) return 'gone'
    throw error
  }
}

/**
 * Once the lines are sent (or the download stopped taking them), the file is written to the storage;
 * a download that fell behind continues from it.
 */
async function afterSending(
  db: Db,
  storage: FeedStorage,
  { file, body, outcome, gate }: { file: RecordedFeedFile; body: PendingFeedBody; outcome: Outcome; gate: MaterialiseGate | undefined },
): Promise<void> {
  if (outcome === 'written') return
  const writing = materialiseFeedFile(db, storage, file, gate)
  if (outcome !== 'behind') {
    // Nobody waits for it: a failure here leaves the file pending, and the next download writes it.
    writing.catch(() => {})
    return
  }
  await writing
  const stored = await storage.open(file.storageKey, 'identity')
  if (!stored) throw new Error(`feed file ${file.storageKey} was replaced while it was downloaded`)
  body.continueWith(stored.stream({ start: body.sent, end: stored.size - 1 }))
}
