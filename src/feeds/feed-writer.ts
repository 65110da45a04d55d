import { createHash } from 'node:crypto'
import { sql } from 'kysely'
import type pg from 'pg'
import { to as copyTo } from 'pg-copy-streams'
import type { Db } from '../db/database.js'
import type { FeedFormat } from '../db/schema.js'
import { CopyBinaryLines } from './copy-binary-lines.js'
import { planFeed, type FeedMeta, type FeedPlan, type FeedRows } from './feed-sql.js'
import type { FeedFileWriter } from './feed-storage.js'

export { contentTypeOf, isXmlName, unwritableColumns, UnwritableColumnsError, type FeedRows, type UnwritableColumns } from './feed-sql.js'

/** What one file may cost. */
export interface FeedBudget {
  /** The largest file, header and footer included (FEED_MAX_BYTES): a stage of many columns times many rows multiplies. */
  maxBytes: number
  /**
   * Cancels the statement of the Postgres backend with this pid. Called once the file has failed
   * (over the budget, a disk error), so that Postgres stops producing output only to be dropped.
   */
  cancel?: (backendPid: number) => Promise<void>
}

/** A budget of `maxBytes` whose cancel runs on a connection of its own: the COPY's connection is busy sending the file. */
export function cancellingBudget(db: Db, maxBytes: number): FeedBudget {
  return {
    maxBytes,
    cancel: async (backendPid) => {
      await sql`SELECT pg_cancel_backend(${backendPid})`.execute(db)
    },
  }
}

/** A file that would pass its budget: nothing of it is kept. */
export class FeedTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the file would pass ${maxBytes} bytes`)
    this.name = 'FeedTooLargeError'
  }
}

/** What went into a file: its size and a strong ETag of its content. */
export interface FeedContent {
  bytes: number
  etag: string
}

/**
 * Streams the rows through COPY ... TO STDOUT into `out`, header and footer around them, and
 * closes it: complete, but not yet visible at its key (the caller publishes it once the rows that
 * name it are written). Runs on the caller's client, inside its transaction if it has one: nothing
 * here begins or ends one. Memory stays flat: each chunk goes to `out` before the next one is read
 * from the connection, and the size is bounded: the write stops as soon as the file would pass
 * `budget.maxBytes`. On any failure `out` is abandoned.
 */
export async function writeFeed(
  client: pg.PoolClient,
  rows: FeedRows,
  format: FeedFormat,
  meta: FeedMeta,
  out: FeedFileWriter,
  budget: FeedBudget = { maxBytes: Infinity },
): Promise<FeedContent> {
  let plan: FeedPlan
  try {
    plan = planFeed(client, rows, format, meta)
  } catch (error) {
    await out.abandon()
    throw error
  }
  return writeFeedPlan(client, plan, out, budget)
}

// Chunks are passed on in batches of about this size: COPY hands over one chunk per row, and a
// write (and a compression step) per row of a million costs more than the rows themselves.
const BATCH_BYTES = 256 * 1024

/**
 * writeFeed for a planned file: its COPY statement and the text around its output. Without
 * `etag`, no content hash is computed (a file whose ETag its export gave it).
 */
export async function writeFeedPlan(
  client: pg.PoolClient,
  plan: FeedPlan,
  out: FeedFileWriter,
  budget: FeedBudget = { maxBytes: Infinity },
  { etag = true } = {},
): Promise<FeedContent> {
  const output = new BatchedOutput(out, budget.maxBytes, etag)
  try {
    await output.put(Buffer.from(plan.header))
    const lines = plan.output === 'lines' ? new CopyBinaryLines() : AS_SENT
    const settings = Object.entries(plan.settings ?? {})
    for (const [name, value] of settings) await client.query('SELECT set_config($1, $2, true)', [name, value])
    await copyLinesInto(client, plan.copySql, { lines, output, budget })
    for (const [name] of settings) await client.query(`RESET ${client.escapeIdentifier(name)}`)
    lines.end()
    await output.put(Buffer.from(plan.footer))
    await output.flush()
    await out.close()
    return { bytes: output.bytes, etag: output.etag() }
  } catch (error) {
    await out.abandon()
    throw error
  }
}

/** The COPY's output as it is sent: the lines of a file COPY writes itself. */
const AS_SENT = { decode: (chunk: Buffer): Buffer[] => [chunk], end: (): void => {} }
type CopyOutput = Pick<CopyBinaryLines, 'decode' | 'end'>

/** The file's bytes on their way to `out`: counted against the budget, hashed, and batched. */
class BatchedOutput {
  bytes = 0
  private readonly hash
  private batch: Buffer[] = []
  private batched = 0

  constructor(
    private readonly out: FeedFileWriter,
    private readonly maxBytes: number,
    etag: boolean,
  ) {
    this.hash = etag ? createHash('sha256') : undefined
  }

  // Not async: a second promise per row is measurable. Throws (FeedTooLargeError) synchronously,
  // inside the caller's try. Resolves, when it writes a batch, once the batch is taken.
  put(...chunks: Buffer[]): Promise<void> | undefined {
    for (const chunk of chunks) {
      if (chunk.length === 0) continue
      if (this.bytes + chunk.length > this.maxBytes) throw new FeedTooLargeError(this.maxBytes)
      this.hash?.update(chunk)
      this.bytes += chunk.length
      this.batch.push(chunk)
      this.batched += chunk.length
    }
    return this.batched >= BATCH_BYTES ? this.flush() : undefined
  }

  flush(): Promise<void> | undefined {
    if (this.batched === 0) return undefined
    const chunk = this.batch.length === 1 ? this.batch[0] : Buffer.concat(this.batch, this.batched)
    this.batch = []
    this.batched = 0
    return chunk && this.out.write(chunk)
  }

  /** A strong ETag: the first 128 bits of the content's SHA-256 ('' without a hash). */
  etag(): string {
    return this.hash ? `"${this.hash.digest('hex').slice(0, 32)}"` : ''
  }
}

/**
 * Runs the COPY and puts its rows' lines into `output`. A COPY stream that is destroyed half-read
 * leaves the connection waiting forever (pg-copy-streams stops reading it), so after a failure on
 * our side the COPY is cancelled and what Postgres sent until then is read and dropped: the
 * connection comes back usable and the caller's ROLLBACK can run.
 */
async function copyLinesInto(
  client: pg.PoolClient,
  copySql: string,
  { lines, output, budget }: { lines: CopyOutput; output: BatchedOutput; budget: FeedBudget },
): Promise<void> {
  const backendPid = budget.cancel ? await backendPidOf(client) : undefined
  let failure: unknown
  let cancelling: Promise<void> | undefined
  const fail = (error: unknown) => {
    failure ??= error
    if (backendPid !== undefined) cancelling ??= budget.cancel?.(backendPid).catch(() => {})
  }
  try {
    // Events rather than `for await`: a promise per row of a million is measurable. The stream
    // pauses while a batch is being written, and reads on (dropping) after a failure.
    const copy = client.query(copyTo(copySql))
    await new Promise<void>((resolve, reject) => {
      copy.on('data', (chunk: Buffer) => {
        if (failure !== undefined) return
        try {
          const written = output.put(...lines.decode(chunk))
          if (!written) return
          copy.pause()
          written.then(
            () => copy.resume(),
            (error: unknown) => {
              fail(error)
              copy.resume()
            },
          )
        } catch (error) {
          fail(error)
        }
      })
      copy.on('end', resolve)
      copy.on('error', reject)
    })
  } catch (error) {
    // After our own failure, the COPY's error is the cancel we asked for: ours says why.
    if (failure === undefined) throw error
  } finally {
    // The cancel is delivered before the caller's next statement, which it could otherwise hit.
    await cancelling
  }
  if (failure !== undefined) throw failure
}

async function backendPidOf(client: pg.PoolClient): Promise<number | undefined> {
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
  return rows[0]?.pid
}
