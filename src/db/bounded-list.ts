// A list read with a bound, saying whether the bound cut it.

/** A list of at most `limit` rows; `cut` when more matched. */
export interface Bounded<T> {
  rows: T[]
  cut: boolean
}

export function bounded<T>(rows: T[], limit: number): Bounded<T> {
  return { rows: rows.slice(0, limit), cut: rows.length > limit }
}
