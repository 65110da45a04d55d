import { once } from 'node:events'
import type pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'

const FLUSH_CHARS = 256 * 1024

/**
 * Feeds rows to `COPY ... FROM STDIN` (text format) in ~256 KB writes, waiting for the socket to
 * drain so that memory stays flat however fast the request body arrives.
 */
export class CopyWriter {
  private readonly stream: ReturnType<typeof copyFrom>
  private readonly done: Promise<void>
  private buffer: string[] = []
  private bufferedChars = 0
  /**
   * Why Postgres ended the COPY early (a cancel, a timeout, a dropped connection). pg-copy-streams
   * lets go of the connection then, and a later write or destroy would fail with a TypeError
   * instead: every step checks this first and reports the database's own error.
   */
  private failure: Error | undefined

  constructor(client: pg.PoolClient, copySql: string) {
    this.stream = client.query(copyFrom(copySql))
    this.done = new Promise((resolve, reject) => {
      this.stream.on('finish', resolve)
      this.stream.on('error', (error: Error) => {
        this.failure ??= error
        reject(error)
      })
    })
    // The stream's failure surfaces through `done`; without a listener it would also crash the process.
    this.done.catch(() => {})
  }

  /** Adds one row whose fields are already escaped with `copyText`; `flushIfFull` sends them. */
  row(line: string): void {
    this.buffer.push(line)
    this.bufferedChars += line.length
  }

  /** Sends the buffered rows once there are enough; throws at once if the COPY has failed. */
  async flushIfFull(): Promise<void> {
    if (this.failure) throw this.failure
    if (this.bufferedChars >= FLUSH_CHARS) await this.flush()
  }

  async finish(): Promise<void> {
    await this.flush()
    this.stream.end()
    await this.done
  }

  /** Aborts the COPY: the server discards what it received and the transaction fails. */
  abort(error: Error): void {
    // A COPY Postgres has already ended needs no CopyFail (and the stream could not send one).
    if (!this.failure) this.stream.destroy(error)
  }

  private async flush(): Promise<void> {
    if (this.failure) throw this.failure
    if (this.bufferedChars === 0) return
    const chunk = this.buffer.join('')
    this.buffer = []
    this.bufferedChars = 0
    // Racing `done` (which holds no data) ends the wait when the COPY failed earlier, while
    // nothing was listening for the stream's 'error'.
    if (!this.stream.write(chunk)) await Promise.race([once(this.stream, 'drain'), this.done])
  }
}

/** Escapes a field for COPY's text format. */
export function copyText(value: string): string {
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, escapeChar) : value
}

function escapeChar(c: string): string {
  return c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'
}
