import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- An incremental import finds the products changed since its stage was built by changed_seq.
    -- The BRIN index assumed changes land at the end of the table; they do only once: later updates
    -- reuse the space pruned from old row versions all over the table, so a random 1% change touched
    -- about 90% of the block ranges and the import read nearly the whole stream (measured at 1M and
    -- 3M rows, issue 13). A btree finds exactly the changed rows. Its cost to a full import is not
    -- measurable (all keys equal after a full load), and updates of stream_product were never HOT
    -- (the tombstone index covers changed_seq), so each change adds one index entry at the right edge.
    DROP INDEX stream_product_changed_idx;
    CREATE INDEX stream_product_changed_idx ON stream_product (stream_id, changed_seq);

    -- The rows of a new upload are read by the batch's id when it is applied; summarized as soon as
    -- a block range fills, the BRIN index can find them without reading every upload still kept.
    ALTER INDEX batch_row_batch_idx SET (autosummarize = on);
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER INDEX batch_row_batch_idx RESET (autosummarize);
    DROP INDEX stream_product_changed_idx;
    CREATE INDEX stream_product_changed_idx ON stream_product USING brin (stream_id, changed_seq);
  `.execute(db)
}
