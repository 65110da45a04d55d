import type { ColumnType, Generated } from 'kysely'
import type { CheckTotals, ColumnMapping, FeedFormat } from './channels.js'

// The stages of a site: import and channel rows, the change log (src/catalog/, src/imports/, src/exports/).

export interface StageProductTable {
  site_id: string
  stage: string
  stage_id: string
  product_id: string
  account_id: string
  /**
   * The row's attributes. Null in a channel stage row that refers to the import stage's row of the
   * same id (a clean row no rule changed: src/db/referred-data.ts).
   */
  data: ColumnType<Record<string, string> | null, string | null, string | null>
  /** A channel stage row's feed line as rendered; null in the import stage, and for a row its template's checks leave out. */
  line: ColumnType<string | null, string | null | undefined, string | null>
  /** A channel stage row's failed checks, a bit per error or warning code of its template; null when none (and in the import stage). */
  issues: ColumnType<string | null, string | null | undefined, string | null>
  /** A channel stage row's rewrites into the channel's spelling, a bit per info code of its template; null when none. */
  notes: ColumnType<string | null, string | null | undefined, string | null>
}

/** The ids an incremental build of a site's import stage touched, by build. */
export interface StageChangeTable {
  site_id: string
  build: string
  product_id: string
}

export interface SiteStageTable {
  site_id: string
  stage: string
  stage_id: string
  account_id: string
  columns: string[]
  row_count: ColumnType<string, string | number, string | number>
  recipe: string
  stream_seqs: ColumnType<Record<string, string>, string, string>
  /** Import stage: this build's number. Channel stage: the import build it was exported from. */
  build: ColumnType<string, string | number | undefined, string | number>
  /** Import stage: stage_change holds every id touched by the builds after this one. */
  changes_from: ColumnType<string, string | number | undefined, string | number>
  /** Channel stage: what its rows and lines were made with (filter, mapping, columns, format). */
  signature: ColumnType<string | null, string | null | undefined, string | null>
  /** Channel stage: the bytes of its lines, a newline each. */
  line_bytes: ColumnType<string, string | number | undefined, string | number>
  /** Channel stage: the counts of its rows' checks (CheckTotals); null before the first export with templates. */
  checks: ColumnType<CheckTotals | null, string | null | undefined, string | null>
  /** Channel stage: its clean rows refer to the import stage's rows instead of keeping a copy of their data. */
  refers_to_import: Generated<boolean>
  /** Channel stage that refers: the mapping its referring rows' data is made with (src/db/referred-data.ts); null: the import rows' data as it is. */
  refers_mapping: ColumnType<ColumnMapping[] | null, string | null | undefined, string | null>
  /**
   * Channel stage: the format (csv, tsv) its lines are rendered in when read, from each row's data by
   * COPY's own CSV writer; its rows then store no line, and every one of them is in the feed. Null:
   * each row stores its line (null for a row left out).
   */
  line_format: ColumnType<'csv' | 'tsv' | null, 'csv' | 'tsv' | null | undefined, 'csv' | 'tsv' | null>
  /** Channel stage: the format its lines were made in; null for a stage saved before it was kept. */
  format: ColumnType<FeedFormat | null, FeedFormat | null | undefined, FeedFormat | null>
  updated_at: Generated<Date>
}
