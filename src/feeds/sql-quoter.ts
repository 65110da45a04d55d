import pg from 'pg'

/** What a client needs to quote SQL: pg's own escaping, so raw configuration text never reaches SQL unquoted. */
export interface SqlQuoter {
  escapeLiteral(text: string): string
  escapeIdentifier(text: string): string
}

/** pg's own escaping, for SQL built as text. */
export const quoter: SqlQuoter = { escapeLiteral: pg.escapeLiteral, escapeIdentifier: pg.escapeIdentifier }
