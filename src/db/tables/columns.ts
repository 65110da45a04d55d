import type { ColumnType } from 'kysely'

// Column types every table file uses. bigint columns come back from pg as strings, which is also how
// the interfaces show ids.
export type Id = ColumnType<string, never, never>
export type CreatedAt = ColumnType<Date, Date | undefined, never>
