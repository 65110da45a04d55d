import { randomUUID } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { MAX_PRODUCT_ID_BYTES, RowError } from '../catalog/row-rules.js'
import { copyText, CopyWriter } from '../db/copy-writer.js'
import { sql } from 'kysely'
import type { Db, DbHandle } from '../db/database.js'
import type { FetchedSourceSettings, SourceFileFormat, SourceRowError } from '../db/schema.js'
import { inTransaction } from '../db/transaction.js'
import { hasUnstorableCharacter, isolatedName } from '../input/text-input.js'
import { finishBatch, insertBatch } from '../streams/batch-store.js'
import { StageCollector } from '../streams/upload-stage.js'
import { pastDeadline, SourceFetchError, type FetchBudget } from './fetch-parts.js'
import { setAttribute } from './record-guard.js'
import { parseSource, type SourceLimits } from './source-parsers.js'

// A fetched file becomes one `replace` batch of its source's stream, as an upload becomes
// a batch: each product a batch_row (by COPY), each refused record an error grouped by its message,
// with the first line numbers of each. A file that cannot be read whole (malformed XML, too many
// products, past its time) rolls back: nothing of it is kept and the source's data stays as it was.

export interface SourceBatchRequest {
  /** The source as its fetch read it: the batch is kept only while its settings are still these. */
  source: { id: string; accountId: string; settings: FetchedSourceSettings; sealedCredentials: string | null }
  stream: { id: string; accountId: string }
  /** The fetched file, and the charset its server declared for it. */
  file: { path: string; charset?: string }
  format: SourceFileFormat
  limits: SourceLimits
  budget: FetchBudget
  now: () => Date
  /** The source's import_empty: a file without products is kept (and empties the source) instead of refused. */
  keepEmpty: boolean
}

export interface SourceBatch {
  /** Undefined when the file held no product: nothing was stored. */
  batchId: string | undefined
  /** Distinct product ids kept (a later record of an id replaces an earlier one). */
  products: number
  refused: number
  errors: SourceRowError[]
}

const LINES_PER_MESSAGE = 20
// A NUL or a lone surrogate as JSON.stringify writes it; only then are the values checked one by one.
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/

export function saveSourceBatch(db: Db, request: SourceBatchRequest): Promise<SourceBatch> {
  return inTransaction(db, async (tx): Promise<SourceBatch> => {
    const batchId = randomUUID()
    const stream = await tx.db
      .selectFrom('stream')
      .selectAll()
      .where('account_id', '=', request.stream.accountId)
      .where('id', '=', request.stream.id)
      .executeTakeFirstOrThrow()
    await insertBatch(tx.db, { batchId, stream, kind: 'replace', contentType: null, now: request.now() })
    const copy = new CopyWriter(tx.client, 'COPY batch_row (batch_id, line_no, account_id, product_id, data) FROM STDIN')
    const rows = new SourceRows(request.format.id_column)
    const prefix = `${batchId}\t`
    const accountField = `\t${request.stream.accountId}\t`
    try {
      const { budget } = request
      const checkpoint = () => {
        if (Date.now() > budget.deadline) throw pastDeadline(budget)
      }
      const options = { ...formatOptions(request.format), charset: request.file.charset }
      const records = parseSource(createReadStream(request.file.path), request.format.format, options, request.limits, checkpoint)
      for await (const record of records) {
        checkpoint()
        if ('error' in record) {
          rows.refuse(record.error, record.line, record.excerpt)
          continue
        }
        const product = rows.read(record.line, record.row)
        if (product === undefined) continue
        copy.row(`${prefix}${record.line}${accountField}${copyText(product.id)}\t${copyText(product.data)}\n`)
        await copy.flushIfFull()
      }
      await copy.finish()
    } catch (error) {
      copy.abort(error as Error)
      throw error
    }
    const repeated = rows.collector.successCount === 0 ? { count: 0, lines: [] } : await repeatedIds(tx.db, batchId)
    const errors = rows.errors()
    if (repeated.count > 0) {
      const message = 'the id appears again further on; the later record is kept'
      errors.push({ message, occurrences: repeated.count, lines: repeated.lines, example: '' })
    }
    const outcome = { products: rows.collector.successCount - repeated.count, refused: rows.collector.errorCount, errors }
    if (outcome.products === 0 && !request.keepEmpty) {
      tx.rollbackOnly()
      return { batchId: undefined, ...outcome }
    }
    // Only now, for the commit: a change of the source saved while the file was read waits a moment, not the whole read.
    await holdUnchanged(tx.db, request.source)
    await finishBatch(tx.db, batchId, rows.collector.stage(request.now()), 'uploaded', [...rows.columns])
    return { batchId, ...outcome }
  })
}

/**
 * Holds the source's row (FOR SHARE) as its fetch read it, until the batch commits: a change saved
 * since the fetch began (another URL, file or format) fails it, and one saved meanwhile waits for
 * the commit, then makes the next import read the file again.
 */
async function holdUnchanged(db: DbHandle, source: SourceBatchRequest['source']): Promise<void> {
  const held = await db
    .selectFrom('data_source')
    .select('id')
    .where('account_id', '=', source.accountId)
    .where('id', '=', source.id)
    .where(sql<boolean>`settings = ${JSON.stringify(source.settings)}::jsonb`)
    .where(sql<boolean>`sealed_credentials IS NOT DISTINCT FROM ${source.sealedCredentials}`)
    .forShare()
    .executeTakeFirst()
  if (!held) throw new SourceFetchError('the source was changed or deleted while it was fetched; the next import reads it as it is now')
}

/** Ids found in more than one record: how many records are replaced by a later one, and the first of their lines. */
async function repeatedIds(db: DbHandle, batchId: string): Promise<{ count: number; lines: number[] }> {
  const { rows } = await sql<{ repeated: string }>`
    SELECT count(*) - count(DISTINCT product_id) AS repeated FROM batch_row WHERE batch_id = ${batchId}`.execute(db)
  const count = Number(rows[0]?.repeated ?? 0)
  if (count === 0) return { count, lines: [] }
  const { rows: lines } = await sql<{ line_no: number }>`
    SELECT line_no FROM (
      SELECT line_no, row_number() OVER (PARTITION BY product_id ORDER BY line_no DESC) AS later FROM batch_row WHERE batch_id = ${batchId}
    ) AS numbered WHERE later > 1 ORDER BY line_no LIMIT ${LINES_PER_MESSAGE}`.execute(db)
  return { count, lines: lines.map((row) => Number(row.line_no)) }
}

function formatOptions(format: SourceFileFormat) {
  return { delimiter: format.delimiter, quote: format.quote, header: format.header, itemElement: format.item_element }
}

/** The rules a source's row meets beyond its file's (those of a stream's rows: an id, storable text). */
class SourceRows {
  readonly collector = new StageCollector()
  readonly columns = new Set<string>()
  private readonly lines = new Map<string, number[]>()

  constructor(private readonly idColumn: string) {}

  read(line: number, row: Record<string, string>): { id: string; data: string } | undefined {
    const id = Object.hasOwn(row, this.idColumn) ? row[this.idColumn]?.trim() : undefined
    if (id === undefined || id === '') return this.refuse(`the id column "${isolatedName(this.idColumn)}" is missing or empty`, line, JSON.stringify(row))
    if (Buffer.byteLength(id) > MAX_PRODUCT_ID_BYTES) return this.refuse(RowError.longId, line, id)
    // The chosen column is the product's id: the row's `id` says the same, as a stream's row does.
    if (this.idColumn !== 'id' || row.id !== id) setAttribute(row, 'id', id)
    const data = JSON.stringify(row)
    if (UNSTORABLE_ESCAPE.test(data) && Object.entries(row).some(([name, value]) => hasUnstorableCharacter(name) || hasUnstorableCharacter(value))) {
      return this.refuse(RowError.controlCharacter, line, data)
    }
    for (const name in row) this.columns.add(name)
    this.collector.success()
    return { id, data }
  }

  refuse(message: string, line: number, excerpt: string): undefined {
    this.collector.error(message, line, excerpt)
    const lines = this.lines.get(message) ?? []
    if (lines.length < LINES_PER_MESSAGE) lines.push(line)
    this.lines.set(message, lines)
    return undefined
  }

  errors(): SourceRowError[] {
    return this.collector.groups.map((error) => ({
      message: error.message,
      occurrences: error.occurrences,
      lines: this.lines.get(error.message) ?? [],
      example: error.example.value,
    }))
  }
}
