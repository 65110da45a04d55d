import { sql, type Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { filterToSql, parseFilter } from '../../src/catalog/filter.js'
import type { Database } from '../../src/db/schema.js'
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js'

// Two probe tables shaped like a stage (id + a jsonb object of text attributes), one for numeric
// semantics and one for text; each test asserts the exact ids a filter selects.
type Probe = { id: string; data: unknown }
type ProbeDb = { num_probe: Probe; text_probe: Probe }

const NUM_ROWS: Record<string, Record<string, string>> = {
  p95: { price: '9.5' },
  p10: { price: '10' },
  p10dot: { price: '10.0' },
  pspaced: { price: ' 10\t' },
  pabc: { price: 'abc' },
  pempty: { price: '' },
  pmissing: {},
  p1e3: { price: '1e3' },
  phuge: { price: '1e999999' },
  ptiny: { price: '1e-999999' },
  pneg: { price: '-2.5' },
  pplus: { price: '+.5' },
  // Far more digits than numeric holds: must be "not a number", never an error.
  pdigits: { price: '9'.repeat(140_000) },
  // A Unicode blank around a number is trimmed, as a rule's condition reads it (src/db/number-text.ts).
  pemspace: { price: '\u200310' },
  pnan: { price: 'NaN' },
  pinf: { price: 'Infinity' },
  phex: { price: '0x1F' },
  punderscore: { price: '1_000' },
}

const TEXT_ROWS: Record<string, Record<string, string>> = {
  t1: { title: 'Red shirt', brand: 'Acme', 'my col': 'v', ___hidden: 'h' },
  t2: { title: 'red', brand: 'acme' },
  t3: { title: '100%', brand: 'Zeta' },
  t4: { title: '100 percent', brand: 'B' },
  t5: { title: 'a_b', brand: '' },
  t6: { title: 'axb' },
  t7: { title: "O'Brien", brand: 'Ä' },
  t8: { title: 'a\\b', brand: 'Acme' },
  t9: { title: "x'); DROP TABLE text_probe; --" },
  t10: { title: 'back`tick "dq" ; -- /* */' },
}

const COLUMNS = ['id', 'price', 'title', 'brand', 'my col', '___hidden']
const NUM_IDS = Object.keys(NUM_ROWS)
const TEXT_IDS = Object.keys(TEXT_ROWS)

let t: TestDatabase
let db: Kysely<Database & ProbeDb>

beforeAll(async () => {
  t = await createTestDatabase()
  db = t.db.withTables<ProbeDb>()
  for (const [table, rows] of [
    ['num_probe', NUM_ROWS],
    ['text_probe', TEXT_ROWS],
  ] as const) {
    await sql`CREATE TABLE ${sql.table(table)} (id text PRIMARY KEY, data jsonb NOT NULL)`.execute(db)
    await db
      .insertInto(table)
      .values(Object.entries(rows).map(([id, data]) => ({ id, data: JSON.stringify(data) })))
      .execute()
  }
})

afterAll(async () => {
  await t?.drop()
})

async function ids(table: keyof ProbeDb, filter: string): Promise<string[]> {
  const rows = await db
    .selectFrom(table)
    .select('id')
    .where(filterToSql(parseFilter(filter, COLUMNS), (column) => sql<string>`coalesce(data->>${column}, '')`))
    .execute()
  return rows.map((row) => row.id).sort()
}

const sorted = (list: string[]) => [...list].sort()
const except = (all: string[], excluded: string[]) => sorted(all.filter((id) => !excluded.includes(id)))

describe('numbers compare numerically where the value is a number', () => {
  const TEN = ['p10', 'p10dot', 'pspaced', 'pemspace']

  it.each([
    ['price = 10', TEN],
    ['price = 10.000', TEN],
    ['10 = price', TEN],
    ['price > 10', ['p1e3']],
    ['price >= 10', [...TEN, 'p1e3']],
    ['price < 10', ['p95', 'pneg', 'pplus']],
    ['price <= 9.5', ['p95', 'pneg', 'pplus']],
    ['price > -3', ['p95', 'p1e3', 'pneg', 'pplus', ...TEN]],
    ['price = 1000', ['p1e3']],
    ['price = 1e3', ['p1e3']],
    ['price = 0.5', ['pplus']],
    ['price < -2.4', ['pneg']],
    ['price > 1e999', []],
    ['price IN (10, 9.5)', ['p95', ...TEN]],
    ['price BETWEEN 9 AND 10', ['p95', ...TEN]],
    ['price BETWEEN 10 AND 9', []],
  ])('%s', async (filter, expected) => {
    expect(await ids('num_probe', filter)).toEqual(sorted(expected))
  })

  it('a string literal compares as text', async () => {
    expect(await ids('num_probe', "price = '10'")).toEqual(['p10'])
    expect(await ids('num_probe', "price = '1e999999'")).toEqual(['phuge'])
    expect(await ids('num_probe', "price IN ('abc', 'NaN')")).toEqual(['pabc', 'pnan'])
  })

  it('a mixed IN list compares each item with its own type', async () => {
    expect(await ids('num_probe', "price IN ('abc', 10)")).toEqual(sorted(['pabc', ...TEN]))
    expect(await ids('num_probe', "price NOT IN ('abc', 10)")).toEqual(except(NUM_IDS, ['pabc', ...TEN]))
  })

  it('non-numeric values (text, empty, missing, out of range, NaN, hex) are false for every numeric test', async () => {
    const numeric = ['p95', 'p10', 'p10dot', 'pspaced', 'pemspace', 'p1e3', 'pneg', 'pplus']
    expect(await ids('num_probe', 'price < 1e999 OR price >= 1e999')).toEqual(sorted(numeric))
    expect(await ids('num_probe', 'price BETWEEN -1e999 AND 1e999')).toEqual(sorted(numeric))
  })

  it('NOT and the negated forms are exact two-valued negations', async () => {
    expect(await ids('num_probe', 'NOT (price > 10)')).toEqual(except(NUM_IDS, ['p1e3']))
    expect(await ids('num_probe', 'NOT price > 10')).toEqual(except(NUM_IDS, ['p1e3']))
    expect(await ids('num_probe', 'price <> 10')).toEqual(except(NUM_IDS, TEN))
    expect(await ids('num_probe', 'price != 10')).toEqual(except(NUM_IDS, TEN))
    expect(await ids('num_probe', 'price NOT IN (10, 9.5)')).toEqual(except(NUM_IDS, ['p95', ...TEN]))
    expect(await ids('num_probe', 'price NOT BETWEEN 9 AND 10')).toEqual(except(NUM_IDS, ['p95', ...TEN]))
    expect(await ids('num_probe', 'NOT NOT price > 10')).toEqual(['p1e3'])
  })

  it('IS NULL means empty: missing or the empty string', async () => {
    expect(await ids('num_probe', 'price IS NULL')).toEqual(['pempty', 'pmissing'])
    expect(await ids('num_probe', 'price IS NOT NULL')).toEqual(except(NUM_IDS, ['pempty', 'pmissing']))
    expect(await ids('num_probe', "price = ''")).toEqual(['pempty', 'pmissing'])
    expect(await ids('num_probe', 'NOT price IS NULL AND price < 0')).toEqual(['pneg'])
  })

  it('no filter selects every row', async () => {
    expect(await ids('num_probe', '  ')).toEqual(sorted(NUM_IDS))
  })
})

describe('text comparisons, LIKE, IN, BETWEEN', () => {
  it.each([
    ["brand = 'Acme'", ['t1', 't8']],
    ["brand = 'acme'", ['t2']],
    ["brand <> 'Acme'", except(TEXT_IDS, ['t1', 't8'])],
    ["NOT brand = 'Acme'", except(TEXT_IDS, ['t1', 't8'])],
    // Bytewise ("C") order: upper case < lower case < non-ASCII.
    ["brand > 'Z'", ['t2', 't3', 't7']],
    ["brand < 'B'", ['t1', 't5', 't6', 't8', 't9', 't10']],
    ["brand BETWEEN 'A' AND 'B'", ['t1', 't4', 't8']],
    ["brand NOT BETWEEN 'A' AND 'B'", except(TEXT_IDS, ['t1', 't4', 't8'])],
    ["brand IN ('Acme', 'B')", ['t1', 't4', 't8']],
    ["brand NOT IN ('Acme', 'B')", except(TEXT_IDS, ['t1', 't4', 't8'])],
    ['brand IS NULL', ['t5', 't6', 't9', 't10']],
    ["title = 'O''Brien'", ['t7']],
    ["title = 'a\\b'", ['t8']],
    ['title = \'back`tick "dq" ; -- /* */\'', ['t10']],
    ["title = 'x''); DROP TABLE text_probe; --'", ['t9']],
    ["`my col` = 'v' AND \"my col\" = 'v' AND ___hidden IS NOT NULL", ['t1']],
  ])('%s', async (filter, expected) => {
    expect(await ids('text_probe', filter)).toEqual(sorted(expected))
  })

  it.each([
    ["title LIKE 'Red%'", ['t1']],
    ["title LIKE '%red%'", ['t2']],
    ["title LIKE '100%'", ['t3', 't4']],
    ["title LIKE '100\\%'", ['t3']],
    ["title LIKE 'a_b'", ['t5', 't6', 't8']],
    ["title LIKE 'a\\_b'", ['t5']],
    ["title LIKE 'a\\\\b'", ['t8']],
    ["title LIKE '%''%'", ['t7', 't9']],
    ["title NOT LIKE '%e%'", ['t3', 't5', 't6', 't8', 't10']],
    ["NOT title LIKE '%e%'", ['t3', 't5', 't6', 't8', 't10']],
    ["title LIKE ''", []],
    ["title LIKE '%'", TEXT_IDS],
  ])('%s', async (filter, expected) => {
    expect(await ids('text_probe', filter)).toEqual(sorted(expected))
  })

  it('precedence: NOT, then AND, then OR', async () => {
    expect(await ids('text_probe', "brand = 'Acme' OR brand = 'B' AND title = 'nope'")).toEqual(['t1', 't8'])
    expect(await ids('text_probe', "(brand = 'Acme' OR brand = 'B') AND title LIKE '100%'")).toEqual(['t4'])
    expect(await ids('text_probe', "NOT brand = 'Acme' AND title LIKE 'a%'")).toEqual(['t5', 't6'])
    expect(await ids('text_probe', "NOT (brand = 'Acme' AND title LIKE 'a%')")).toEqual(except(TEXT_IDS, ['t8']))
  })

  it('a hostile literal is only a string: it matches nothing and the table survives', async () => {
    expect(await ids('text_probe', "title = 'x''); DROP TABLE t; --'")).toEqual([])
    expect(await ids('text_probe', "title LIKE '%''); DROP TABLE text_probe; --%' OR brand IN ('''; DELETE FROM text_probe; --')")).toEqual(['t9'])
    const { count } = await db
      .selectFrom('text_probe')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .executeTakeFirstOrThrow()
    expect(Number(count)).toBe(TEXT_IDS.length)
  })

  it('a hostile column name is only a parameter', async () => {
    const name = "title') IS NULL; DROP TABLE text_probe; --"
    const rows = await db
      .selectFrom('text_probe')
      .select('id')
      .where(filterToSql(parseFilter(`"${name.replaceAll('"', '""')}" IS NULL`, [name]), (column) => sql<string>`coalesce(data->>${column}, '')`))
      .execute()
    expect(rows).toHaveLength(TEXT_IDS.length)
  })
})
