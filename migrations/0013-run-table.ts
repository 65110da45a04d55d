import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- One word for a run (issue: "one word for a run"): the table the code has always called a run
    -- is named for it. The id column stays pid: the run's id is pid in every table that records a
    -- run's work (site_error, import_history, channel_export, channel_push) and on the wire.
    ALTER TABLE process RENAME TO run;
    ALTER TABLE run RENAME CONSTRAINT process_pkey TO run_pkey;
    ALTER TABLE run RENAME CONSTRAINT process_account_id_fkey TO run_account_id_fkey;
    ALTER TABLE run RENAME CONSTRAINT process_site_id_fkey TO run_site_id_fkey;
    ALTER TABLE run RENAME CONSTRAINT process_action_check TO run_action_check;
    ALTER TABLE run RENAME CONSTRAINT process_trigger_check TO run_trigger_check;
    ALTER TABLE run RENAME CONSTRAINT process_status_check TO run_status_check;
    ALTER INDEX process_one_queued_idx RENAME TO run_one_queued_idx;
    ALTER INDEX process_one_running_idx RENAME TO run_one_running_idx;
    ALTER INDEX process_site_idx RENAME TO run_site_idx;
    ALTER INDEX process_running_idx RENAME TO run_running_idx;
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER INDEX run_running_idx RENAME TO process_running_idx;
    ALTER INDEX run_site_idx RENAME TO process_site_idx;
    ALTER INDEX run_one_running_idx RENAME TO process_one_running_idx;
    ALTER INDEX run_one_queued_idx RENAME TO process_one_queued_idx;
    ALTER TABLE run RENAME CONSTRAINT run_status_check TO process_status_check;
    ALTER TABLE run RENAME CONSTRAINT run_trigger_check TO process_trigger_check;
    ALTER TABLE run RENAME CONSTRAINT run_action_check TO process_action_check;
    ALTER TABLE run RENAME CONSTRAINT run_site_id_fkey TO process_site_id_fkey;
    ALTER TABLE run RENAME CONSTRAINT run_account_id_fkey TO process_account_id_fkey;
    ALTER TABLE run RENAME CONSTRAINT run_pkey TO process_pkey;
    ALTER TABLE run RENAME TO process;
  `.execute(db)
}
