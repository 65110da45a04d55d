import type pg from 'pg'
import type { Db } from '../db/database.js'
import type { BatchStage } from '../db/schema.js'
import { RowError, RowReader, type AttributeNames } from '../catalog/row-rules.js'
import { CopyWriter, copyText } from '../db/copy-writer.js'
import { StageCollector } from '../streams/upload-stage.js'
import { elementSplitter, type Element } from './json-elements.js'

/**
 * A referenced payload is parsed when it is imported: its stored chunks are read one at a time,
 * split into products, checked by the row rules of chunked uploads, and copied into batch_row, so
 * that applying it is the same set-based statement as for a chunked batch. Products that fail are
 * counted in the processing stage, grouped by message.
 */
export async function parseReferencedBatch(
  db: Db,
  client: pg.PoolClient,
  batch: { id: string; contentType: string | null },
  accountId: string,
  now: Date,
  names: AttributeNames,
): Promise<{ stage: BatchStage; columns: string[] }> {
  const batchId = batch.id
  const collector = new StageCollector()
  const reader = new RowReader()
  const splitter = elementSplitter(batch.contentType)
  const decoder = new TextDecoder('utf-8')
  const copy = new CopyWriter(client, 'COPY batch_row (batch_id, line_no, account_id, product_id, data) FROM STDIN')
  const prefix = `${batchId}\t`
  const accountField = `\t${accountId}\t`
  const handle = (element: Element) => {
    if (element.kind === 'tooLarge') return collector.error(RowError.tooLarge, element.index, element.head)
    if (element.kind === 'trailing') return collector.error(RowError.syntax, element.index, element.text)
    const row = reader.read(element.text)
    if ('error' in row) {
      // Blank entries between separators are not products; the upload already refused empty payloads.
      if (row.error === RowError.emptyLine) return
      return collector.error(row.error, element.index, element.text)
    }
    const refused = names.add(row.attributes)
    if (refused) return collector.error(refused, element.index, element.text)
    collector.success()
    copy.row(`${prefix}${element.index}${accountField}${copyText(row.productId)}\t${copyText(row.data)}\n`)
  }
  try {
    for (let chunkNo = 1; ; chunkNo++) {
      // Through the pool, not the transaction's client: that client is busy with the COPY. The
      // payload committed with its batch, so any connection sees it.
      const chunk = await db.selectFrom('batch_payload').select('chunk').where('batch_id', '=', batchId).where('chunk_no', '=', chunkNo).executeTakeFirst()
      if (!chunk) break
      for (const element of splitter.push(decoder.decode(chunk.chunk, { stream: true }))) handle(element)
      await copy.flushIfFull()
    }
    for (const element of splitter.push(decoder.decode())) handle(element)
    for (const element of splitter.end()) handle(element)
    await copy.finish()
  } catch (error) {
    copy.abort(error as Error)
    throw error
  }
  return { stage: collector.stage(now), columns: [...names.names] }
}
