import { sql, type RawBuilder } from 'kysely'

// jsonb_build_object takes at most 100 arguments: wider objects are built in slices and joined.
const PAIRS_PER_CALL = 50

/** A jsonb object of `[key, value]` SQL pairs, in any number. */
export function jsonbObject(pairs: [RawBuilder<unknown>, RawBuilder<unknown>][]): RawBuilder<unknown> {
  if (pairs.length === 0) return sql`'{}'::jsonb`
  const slices: RawBuilder<unknown>[] = []
  for (let i = 0; i < pairs.length; i += PAIRS_PER_CALL) {
    slices.push(sql`jsonb_build_object(${sql.join(pairs.slice(i, i + PAIRS_PER_CALL).map(([key, value]) => sql`${key}, ${value}`))})`)
  }
  return sql.join(slices, sql` || `)
}
