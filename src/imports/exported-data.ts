import { sql } from 'kysely'
import type { Trx } from './stage-rows.js'
import { CHANNEL_STAGES, channelStage, inStage, sameImportRow } from '../db/stage-keys.js'
import { referredDataText } from '../db/referred-data.js'

// A channel keeps no copy of a clean row's data in its stage: its data is NULL there, meaning "the
// import stage's row of the same id", as it is or through the mapping the stage was saved with
// (src/db/referred-data.ts): one copy of each row, not two. Before the import changes or deletes a
// row of the import stage, every channel stage row that refers to it gets the data it refers to,
// so that the channel stage keeps showing what was exported until the next export compares, writes
// the new line, and lets the row refer again.

/** Which import stage rows are about to change: those of a stream changed since a sequence number, or all of them (a rebuild). */
export type ChangingRows = { streamId: string; sinceSeq: string } | 'all'

/**
 * Copies the import stage's data into the channel stage rows that refer to rows about to change.
 * One statement per channel stage of the site. For a change, each is driven by the changed ids
 * (an index descent each) with the import stage's row looked up per updated row: planned as a join,
 * a statement right after a bulk load walked the whole import stage and tested every row against
 * the list of ids (minutes at 1,000,000 rows, measured).
 */
export async function keepExportedData(trx: Trx, siteId: string, changing: ChangingRows): Promise<void> {
  const channels = await trx
    .selectFrom('site_stage')
    .select(['stage_id', 'refers_mapping'])
    .where('site_id', '=', siteId)
    .where('stage', '=', CHANNEL_STAGES)
    .where('refers_to_import', '=', true)
    .execute()
  for (const stage of channels) {
    const channelId = stage.stage_id
    const referred = sql.raw(referredDataText('i.data', { mapping: stage.refers_mapping }))
    if (changing === 'all') {
      await sql`UPDATE stage_product c SET data = ${referred}
        FROM stage_product i
        WHERE ${inStage('c', siteId, channelStage(channelId))} AND c.data IS NULL AND ${sameImportRow('i', 'c', siteId)}`.execute(trx)
      continue
    }
    await sql`UPDATE stage_product c SET data = (SELECT ${referred} FROM stage_product i WHERE ${sameImportRow('i', 'c', siteId)})
      WHERE ${inStage('c', siteId, channelStage(channelId))} AND c.data IS NULL
        AND c.product_id = ANY(ARRAY(
          SELECT product_id FROM stream_product WHERE stream_id = ${changing.streamId} AND changed_seq > ${changing.sinceSeq}))`.execute(trx)
  }
}
