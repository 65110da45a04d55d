import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { feedFrame, lineSql, linesPlan, renderedLine, renderedLinesPlan, type FeedPlan, type RenderedFormat } from '../../src/feeds/feed-sql.js'
import type { FeedFileWriter } from '../../src/feeds/feed-storage.js'
import { writeFeedPlan } from '../../src/feeds/feed-writer.js'
import { quoter } from '../../src/feeds/sql-quoter.js'
import { createRowsTable, openWriterFixture, type WriterFixture } from './feed-writer-harness.js'

// A channel stage either stores each row's line (rendered in SQL by lineSql) or renders its lines
// when read, by COPY's own CSV writer (renderedLinesPlan). A feed must not depend on which: both
// renderings of the same rows are compared byte for byte, over values with every character CSV and
// TSV quote for, empty and missing values, the end-of-data marker \. and unicode, in a line of
// no column, of one, and of several.

const SPECIAL = ['"', ',', '\t', '\n', '\r', '\r\n', '\\', '\\.', '.', ' ', 'é', '日本', '🎉', 'a', 'Z9', '\u2028', '\u00a0', "'", ';', '|']

/** A seeded generator: the same corpus on every run, and a failure names its row. */
function corpus(count: number): Record<string, Record<string, string>> {
  let seed = 2026
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % n
  }
  const value = () => Array.from({ length: next(7) }, () => SPECIAL[next(SPECIAL.length)]).join('')
  const rows: Record<string, Record<string, string>> = {
    'r-empty': { a: '', b: '', c: '' },
    'r-missing': {},
    'r-marker': { a: '\\.', b: '\\.', c: '\\.' },
    'r-quotes': { a: '"', b: '""', c: 'say "hi", then\ngo' },
    'r-spaces': { a: ' ', b: '  lead', c: 'trail  ' },
  }
  for (let i = 0; i < count; i++) {
    const row: Record<string, string> = {}
    // A key left out now and then: read as empty, as in a stage row without the attribute.
    for (const column of ['a', 'b', 'c']) if (next(8) !== 0) row[column] = value()
    rows[`r${String(i).padStart(5, '0')}`] = row
  }
  return rows
}

/** What a writer is given, collected. */
function collected(): FeedFileWriter & { bytes(): Buffer } {
  const chunks: Buffer[] = []
  return {
    write: async (chunk) => {
      chunks.push(Buffer.from(chunk))
    },
    close: async () => {},
    publish: async () => {},
    abandon: async () => {},
    bytes: () => Buffer.concat(chunks),
  }
}

let f: WriterFixture
let rowsSql: string
const rows = corpus(3000)

beforeAll(async () => {
  f = await openWriterFixture()
  // Inserted in reverse: both files come out in product id order.
  rowsSql = await createRowsTable(f.client, 'stage_rows', Object.fromEntries(Object.entries(rows).reverse()))
})

afterAll(async () => {
  await f.close()
})

async function written(plan: FeedPlan): Promise<Buffer> {
  const out = collected()
  await writeFeedPlan(f.client, plan, out)
  return out.bytes()
}

describe('lines rendered on read', () => {
  for (const format of ['csv', 'tsv'] as RenderedFormat[]) {
    for (const columns of [['a', 'b', 'c'], ['a'], ['c', 'a'], []]) {
      it(`are the stored lines byte for byte: ${format}, columns [${columns.join(', ')}]`, async () => {
        const frame = feedFrame(columns, format, { title: 'Feed', link: '' })
        const stored = await written(linesPlan(`SELECT r.product_id, ${lineSql(quoter, columns, format, 'r.data')} AS line FROM (${rowsSql}) r`, frame))
        const onRead = await written(renderedLinesPlan(quoter, { rowsSql, columns, format }, frame))
        expect(stored.length).toBeGreaterThan(frame.header.length)
        if (!onRead.equals(stored)) {
          // Name the first line that differs rather than two megabytes.
          const a = stored.toString('utf8')
          const b = onRead.toString('utf8')
          let at = 0
          while (a[at] === b[at]) at++
          expect(JSON.stringify(b.slice(Math.max(0, at - 40), at + 40))).toBe(JSON.stringify(a.slice(Math.max(0, at - 40), at + 40)))
        }
        expect(onRead.equals(stored)).toBe(true)
      })
    }
  }

  it('show one row as the file writes it', async () => {
    // renderedLine is the console's one-row view of the same rendering.
    for (const format of ['csv', 'tsv'] as RenderedFormat[]) {
      for (const columns of [['a', 'b', 'c'], ['a']]) {
        const ids = Object.keys(rows).sort()
        const frame = feedFrame(columns, format, { title: 'Feed', link: '' })
        const file = (await written(renderedLinesPlan(quoter, { rowsSql, columns, format }, frame))).toString('utf8')
        const expected =
          frame.header +
          ids
            .map(
              (id) =>
                renderedLine(
                  columns.map((c) => rows[id]?.[c] ?? ''),
                  format,
                ) + '\n',
            )
            .join('')
        expect(file === expected, `${format} [${columns.join(', ')}]`).toBe(true)
      }
    }
  })
})
