import { sql, type Expression } from 'kysely'
import { QUERY_CANCELED, type Db, type DbHandle } from '../db/database.js'
import { withReadSnapshot } from '../db/transaction.js'
import { BadRequestError, ReadTimeoutError } from '../errors.js'

/**
 * The rows of a page from its offset (`after` undefined) or after a product id (keyset), in product
 * id order, at most `limit`: the query of a product read, without its size cap.
 */
export type PageRows = (handle: DbHandle, after: string | undefined, limit: number) => Expression<unknown>

export interface PageShape {
  /** The output columns, in order; a row without a value gets ''. */
  columns: string[]
  limit: number
  /** PRODUCT_READ_MAX_BYTES: the most the page's JSON may hold. */
  maxBytes: number
  /** PRODUCT_READ_TIMEOUT_MS: the most one of the read's statements may take. */
  timeoutMs: number
}

// One query brings at most about this many bytes of rows, whatever the page asks: rows can be up
// to a few MB each, and a thousand of them read at once would hold gigabytes.
const SLICE_BYTES = 4 * 1024 * 1024
// Values stored in at most this many bytes are taken at their stored size (see sizedSlice).
const STORED_AS_IS_BYTES = 1000
// Rows the first slice looks at: an ordinary page (limit 100 and less) comes in that one query.
const FIRST_SLICE_ROWS = 100

/**
 * A page of product rows as the JSON texts of its rows, written row by row within the byte budget
 * (a 400 that says what to ask instead, before anything is sent). One repeatable-read snapshot with
 * a statement timeout: most pages come in one query, a larger one slice by slice, never mixing the
 * stage an import left with the next one.
 */
export async function readPageRows(db: Db, rows: PageRows, shape: PageShape): Promise<string[]> {
  try {
    return await withReadSnapshot(db, shape.timeoutMs, async (handle) => {
      const page = new PageText(shape)
      // Each slice measures at most twice the rows that fitted the one before, so that rows of a few
      // MB are measured about once each, not once per slice.
      let look = Math.min(shape.limit, FIRST_SLICE_ROWS)
      for (let after: string | undefined; page.rows < shape.limit;) {
        const asked = Math.min(look, shape.limit - page.rows)
        const slice = await sliceOf(handle, rows, after, asked)
        page.add(slice.rows)
        // Fewer rows than asked, none held back for size: the page has no more.
        if (slice.rows.length === 0 || (slice.complete && slice.rows.length < asked)) break
        after = slice.rows[slice.rows.length - 1]?.product_id
        look = slice.complete ? look * 2 : Math.max(1, slice.rows.length * 2)
      }
      return page.rowTexts()
    })
  } catch (error) {
    if ((error as { code?: unknown }).code === QUERY_CANCELED) throw new ReadTimeoutError(shape.timeoutMs)
    throw error
  }
}

interface Slice {
  rows: { product_id: string; data: Record<string, string> }[]
  /** Every row up to the slice's limit came (none was left for the size cap). */
  complete: boolean
}

async function sliceOf(handle: DbHandle, rows: PageRows, after: string | undefined, limit: number): Promise<Slice> {
  const { rows: found } = await sizedSlice(rows(handle, after, limit)).execute(handle)
  return { rows: found, complete: found.length === Number(found[0]?.page_rows ?? 0) }
}

/**
 * A page query's rows up to about SLICE_BYTES (at least one), measured by Postgres before it sends
 * them, with the number of rows the page query has (`page_rows`). A row's size is what it takes on
 * disk while that is small (a row is compressed only past about 2 KB, so a small stored size is its
 * real size), otherwise the length of its text, which costs a serialisation only large rows pay.
 */
export function sizedSlice(page: Expression<unknown>) {
  return sql<{ product_id: string; data: Record<string, string>; page_rows: string }>`
    SELECT product_id, data, page_rows FROM (
      SELECT product_id, data, count(*) OVER () AS page_rows,
        sum(bytes) OVER (ORDER BY product_id ROWS UNBOUNDED PRECEDING) - bytes AS before
      FROM (
        SELECT product_id, data, CASE WHEN pg_column_size(data) <= ${STORED_AS_IS_BYTES} THEN pg_column_size(data) ELSE octet_length(data::text) END AS bytes
        FROM (${page}) AS page
      ) AS measured
    ) AS sized
    WHERE before < ${SLICE_BYTES}
    ORDER BY product_id`
}

/**
 * The `products` rows as JSON texts, one by one, within the byte budget. Each text is written key by
 * key in the asked column order rather than through a JS object: an object would put integer-like
 * names ("2024") first, read a name the row lacks as an inherited member ("toString" is a function,
 * which JSON.stringify drops), and take "__proto__" as its prototype instead of a key.
 */
class PageText {
  private readonly parts: string[] = []
  /** Each column with the text that opens its member: `{"id":`, `,"title":`... */
  private readonly members: [string, string][]
  private bytes = 2
  rows = 0

  constructor(private readonly shape: PageShape) {
    this.members = shape.columns.map((column, i) => [column, `${i === 0 ? '{' : ','}${JSON.stringify(column)}:`])
  }

  add(rows: { data: Record<string, string> }[]): this {
    const { maxBytes, limit } = this.shape
    for (const { data } of rows) {
      let text = this.members.length === 0 ? '{' : ''
      for (const [column, opening] of this.members) text += opening + JSON.stringify(valueOf(data, column))
      text += '}'
      this.bytes += Buffer.byteLength(text) + 1
      if (this.bytes > maxBytes) {
        const fits = this.rows > 0 ? ` (limit=${this.rows} fits here)` : ''
        throw new BadRequestError(
          `The page is larger than the read budget of ${maxBytes} bytes (PRODUCT_READ_MAX_BYTES): ${this.rows} of the ${limit} rows asked fit. Ask ` +
            `for fewer columns with fields (e.g. fields=id,title) or for fewer rows with limit${fits}.`,
        )
      }
      this.parts.push(text)
      this.rows++
    }
    return this
  }

  /** The rows' JSON texts, in page order. */
  rowTexts(): string[] {
    return this.parts
  }
}

/** A row's value of a column: its own attribute only (never an inherited member), '' when it has none. */
function valueOf(data: Record<string, string>, column: string): string {
  if (!Object.hasOwn(data, column)) return ''
  const value: unknown = data[column]
  return typeof value === 'string' ? value : value === null || value === undefined ? '' : String(value)
}
