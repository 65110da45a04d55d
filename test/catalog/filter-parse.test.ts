import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { filterToSql, MAX_FILTER_LENGTH, parseFilter, type FilterNode } from '../../src/catalog/filter.js'
import { BadRequestError } from '../../src/errors.js'

const COLUMNS = ['id', 'brand', 'price', 'title', 'gtin', 'my col', 'x y', '___hidden', 'größe', 'a.b', 'Brand']

const parse = (text: string) => parseFilter(text, COLUMNS)
const str = (value: string) => ({ type: 'string', value }) as const
const num = (value: string) => ({ type: 'number', value }) as const
const eq = (column: string, value: string): FilterNode => ({ kind: 'compare', column, op: '=', value: str(value) })

function parseError(text: string): string {
  try {
    parse(text)
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError)
    return (error as BadRequestError).message
  }
  throw new Error(`expected ${JSON.stringify(text)} to be refused`)
}

describe('parseFilter: operators', () => {
  it.each([
    ['=', '='],
    ['<>', '<>'],
    ['!=', '<>'],
    ['<', '<'],
    ['<=', '<='],
    ['>', '>'],
    ['>=', '>='],
  ])('comparison %s', (written, op) => {
    expect(parse(`price ${written} 10`)).toEqual({ kind: 'compare', column: 'price', op, value: num('10') })
    expect(parse(`title ${written} 'x'`)).toEqual({ kind: 'compare', column: 'title', op, value: str('x') })
  })

  it('a literal on the left is turned around', () => {
    expect(parse('10 < price')).toEqual({ kind: 'compare', column: 'price', op: '>', value: num('10') })
    expect(parse("'a' >= title")).toEqual({ kind: 'compare', column: 'title', op: '<=', value: str('a') })
    expect(parse("'Acme' = brand")).toEqual(eq('brand', 'Acme'))
  })

  it('LIKE and NOT LIKE', () => {
    expect(parse("title LIKE 'Red%'")).toEqual({ kind: 'like', column: 'title', pattern: 'Red%', negated: false })
    expect(parse("title NOT LIKE '_a\\%'")).toEqual({ kind: 'like', column: 'title', pattern: '_a\\%', negated: true })
    expect(parse("title LIKE 'a\\\\'")).toEqual({ kind: 'like', column: 'title', pattern: 'a\\\\', negated: false })
  })

  it('IN and NOT IN, with strings, numbers or both', () => {
    expect(parse("brand IN ('a', 'b')")).toEqual({ kind: 'in', column: 'brand', values: [str('a'), str('b')], negated: false })
    expect(parse('price NOT IN (1, -2.5)')).toEqual({ kind: 'in', column: 'price', values: [num('1'), num('-2.5')], negated: true })
    expect(parse("price IN ('abc', 10)")).toEqual({ kind: 'in', column: 'price', values: [str('abc'), num('10')], negated: false })
  })

  it('IS NULL and IS NOT NULL', () => {
    expect(parse('gtin IS NULL')).toEqual({ kind: 'empty', column: 'gtin', negated: false })
    expect(parse('gtin IS NOT NULL')).toEqual({ kind: 'empty', column: 'gtin', negated: true })
  })

  it('BETWEEN and NOT BETWEEN', () => {
    expect(parse('price BETWEEN 1 AND 2.5')).toEqual({ kind: 'between', column: 'price', low: num('1'), high: num('2.5'), negated: false })
    expect(parse("title NOT BETWEEN 'a' AND 'm'")).toEqual({ kind: 'between', column: 'title', low: str('a'), high: str('m'), negated: true })
  })

  it('blank text is no filter', () => {
    expect(parse('')).toEqual({ kind: 'and', items: [] })
    expect(parse(' \n\t ')).toEqual({ kind: 'and', items: [] })
  })
})

describe('parseFilter: precedence and parentheses', () => {
  it('AND binds tighter than OR', () => {
    expect(parse("id = 'a' OR id = 'b' AND id = 'c'")).toEqual({
      kind: 'or',
      items: [eq('id', 'a'), { kind: 'and', items: [eq('id', 'b'), eq('id', 'c')] }],
    })
    expect(parse("id = 'a' AND id = 'b' OR id = 'c'")).toEqual({
      kind: 'or',
      items: [{ kind: 'and', items: [eq('id', 'a'), eq('id', 'b')] }, eq('id', 'c')],
    })
  })

  it('NOT binds tighter than AND', () => {
    expect(parse("NOT id = 'a' AND id = 'b'")).toEqual({ kind: 'and', items: [{ kind: 'not', item: eq('id', 'a') }, eq('id', 'b')] })
    expect(parse("NOT (id = 'a' AND id = 'b')")).toEqual({ kind: 'not', item: { kind: 'and', items: [eq('id', 'a'), eq('id', 'b')] } })
    expect(parse("NOT NOT id = 'a'")).toEqual({ kind: 'not', item: { kind: 'not', item: eq('id', 'a') } })
  })

  it('parentheses group, and chains of one operator are flattened', () => {
    expect(parse("(id = 'a' OR id = 'b') AND id = 'c'")).toEqual({
      kind: 'and',
      items: [{ kind: 'or', items: [eq('id', 'a'), eq('id', 'b')] }, eq('id', 'c')],
    })
    expect(parse("id = 'a' AND (id = 'b' AND id = 'c') AND id = 'd'")).toEqual({
      kind: 'and',
      items: [eq('id', 'a'), eq('id', 'b'), eq('id', 'c'), eq('id', 'd')],
    })
    expect(parse("((((id = 'a'))))")).toEqual(eq('id', 'a'))
    expect(parse("(id) = ('a')")).toEqual(eq('id', 'a'))
  })

  it('the example from the design', () => {
    expect(parse("brand = 'Acme' AND (price > 10 OR title LIKE 'Red%') AND gtin IS NOT NULL")).toEqual({
      kind: 'and',
      items: [
        eq('brand', 'Acme'),
        {
          kind: 'or',
          items: [
            { kind: 'compare', column: 'price', op: '>', value: num('10') },
            { kind: 'like', column: 'title', pattern: 'Red%', negated: false },
          ],
        },
        { kind: 'empty', column: 'gtin', negated: true },
      ],
    })
  })

  it('keywords in any case; column names exactly as written', () => {
    expect(parse("brand = 'a' and not gtin is not null Or title not like 'x' AND price between 1 and 2 aNd id In ('z')")).toEqual(
      parse("brand = 'a' AND NOT gtin IS NOT NULL OR title NOT LIKE 'x' AND price BETWEEN 1 AND 2 AND id IN ('z')"),
    )
    expect(parse("Brand = 'a'")).toEqual(eq('Brand', 'a'))
    expect(parseError("BRAND = 'a'")).toBe('filter: unknown column "BRAND" at position 1')
  })

  it('a long chain stays flat', () => {
    const text = Array.from({ length: 100 }, (_, i) => `id=${i}`).join(' OR ')
    const node = parse(text)
    expect(node.kind === 'or' && node.items.length).toBe(100)
  })
})

describe('parseFilter: literals and names', () => {
  it.each([
    ["'O''Brien'", "O'Brien"],
    ["''''", "'"],
    ["''", ''],
    ["'back`tick'", 'back`tick'],
    ['\'double "quote"\'', 'double "quote"'],
    ["'semi; colon'", 'semi; colon'],
    ["'dash -- dash'", 'dash -- dash'],
    ["'/* not a comment */'", '/* not a comment */'],
    ["'x''); DROP TABLE t; --'", "x'); DROP TABLE t; --"],
    ["'back\\slash'", 'back\\slash'],
    ["'line\nbreak'", 'line\nbreak'],
    ["'ünïcödé ✓'", 'ünïcödé ✓'],
  ])('string %s', (literal, value) => {
    expect(parse(`title = ${literal}`)).toEqual(eq('title', value))
  })

  it.each([
    ['10', '10'],
    ['-10', '-10'],
    ['- 10', '-10'],
    ['+10', '10'],
    ['10.5', '10.5'],
    ['-0.25', '-0.25'],
    ['.5', '.5'],
    ['5.', '5.'],
    ['1e3', '1e3'],
    ['-1.5E-3', '-1.5E-3'],
    ['1e999', '1e999'],
    ['00012', '00012'],
  ])('number %s', (literal, value) => {
    expect(parse(`price = ${literal}`)).toEqual({ kind: 'compare', column: 'price', op: '=', value: num(value) })
  })

  it.each([
    ['title', 'title'],
    ['`my col`', 'my col'],
    ['"my col"', 'my col'],
    ['"x y"', 'x y'],
    ['`x y`', 'x y'],
    ['___hidden', '___hidden'],
    ['größe', 'größe'],
    ['"a.b"', 'a.b'],
  ])('column %s', (written, column) => {
    expect(parse(`${written} = 'v'`)).toEqual(eq(column, 'v'))
  })

  it('doubled quotes inside quoted names', () => {
    expect(parseFilter('"say ""hi""" = 1', ['say "hi"'])).toEqual({ kind: 'compare', column: 'say "hi"', op: '=', value: num('1') })
    expect(parseFilter('`tick``s` = 1', ['tick`s'])).toEqual({ kind: 'compare', column: 'tick`s', op: '=', value: num('1') })
    expect(parseFilter('"a`b" = \'`"\' AND `c"d` = \'"`\'', ['a`b', 'c"d'])).toEqual({
      kind: 'and',
      items: [eq('a`b', '`"'), eq('c"d', '"`')],
    })
  })
})

describe('parseFilter: refused', () => {
  it.each([
    ['1=1; DROP TABLE stage_product', /^filter: syntax error near ";" at position 4$/],
    ["id = 'a'; DROP TABLE stage_product", /syntax error near ";" at position 9/],
    ["id = 'a');DELETE FROM account;SELECT ('1'", /syntax error near ";"/],
    ["id = 'a';", /syntax error near ";"/],
    ["id = '' OR pg_sleep(10)", /^filter: unsupported function pg_sleep at position 12$/],
    ['pg_sleep(10)', /unsupported function pg_sleep/],
    ["id = 'a' -- comment", /^filter: comments are not supported at position 10$/],
    ["id = 'a' --", /comments are not supported/],
    ["id = 'a' /* c */", /^filter: comments are not supported at position 10$/],
    ["id = /* c */ 'a'", /comments are not supported at position 6/],
    ["id = 'a' /* c", /comments are not supported/],
    ["id = 'a' # c", /syntax error near "#"/],
    ['id IN (SELECT id FROM account)', /unsupported subquery/],
    ['EXISTS (SELECT 1)', /unsupported subquery \(EXISTS\)/],
    ['id = (SELECT 1)', /unsupported subquery/],
    ["current_user = 'x'", /^filter: unsupported function current_user at position 1$/],
    ['id = current_user', /unsupported function current_user at position 6/],
    ['id = current_user()', /syntax error near "\(" at position 18/],
    ["user = 'x'", /unsupported function user/],
    ['id::int = 1', /^filter: unsupported cast \(::\) at position 1$/],
    ['CAST(id AS int) = 1', /unsupported cast/],
    ['id = \'a\' COLLATE "C"', /unsupported COLLATE/],
    ['id = $1', /^filter: unsupported parameter \$1 at position 6$/],
    ['id = ?', /unsupported parameter \?/],
    ['id = :name', /unsupported parameter :name at position 6/],
    ['id = ＇a＇', /syntax error near "＇" at position 6/],
    ["id = U&'\\0041'", /unsupported U&'...' string/],
    ["id = E'\\x41'", /unsupported E'...' string/],
    ["id = N'x'", /unsupported N'...' string/],
    ["id = X'41'", /unsupported hex literal/],
    ['id = 0x41', /unsupported hex literal/],
    ['id = $$x$$', /unsupported \$\$ string/],
    ["id = 'a' A\u200bND id = 'b'", /syntax error near "A" at position 10/],
    ["id = 'a'\u200b", /^filter: syntax error near "\\u200b" at position 9$/],
    ['"a\u00a0b" = 1', /unknown column "a\\u00a0b"/],
    ["colour = 'x'", /^filter: unknown column "colour" at position 1$/],
    ['id = "x"', /^filter: unknown column "x" \(a string takes single quotes\) at position 6$/],
    ['a.b = 1', /unknown column "a.b" \(quote a name that contains a dot\)/],
    ['price + 1 > 2', /^filter: unsupported operator \+ at position 1$/],
    ['price > 2 * 3', /unsupported operator \*/],
    ["title || 'x' = 'y'", /unsupported operator \|\|/],
    ['price = - price', /unsupported operator -/],
    ['price = -(1)', /unsupported operator -/],
    ['()', /syntax error near "\)" at position 2/],
    ["id = 'a' UNION SELECT 1", /syntax error near "UNION" at position 10/],
    ['x = 1) UNION SELECT (1', /only a condition is allowed, found UNION/],
    ["id = 'a') OR (id = 'b'", /unbalanced parentheses/],
    ["id = 'a')", /unbalanced "\)"/],
    ["((id = 'a')", /syntax error at end of filter/],
    ["id = 'a' ORDER BY id", /syntax error near "ORDER"/],
    ["id = 'a' LIMIT 1", /syntax error near "LIMIT"/],
    ["id = 'a' AND", /syntax error at end of filter/],
    ["id = 'abc", /unterminated string literal at position 6/],
    ["title ILIKE 'x'", /unsupported operator ILIKE/],
    ["title SIMILAR TO 'x'", /unsupported operator SIMILAR TO/],
    ["title ~ 'x'", /unsupported operator ~/],
    ["title REGEXP 'x'", /unsupported operator REGEXP/],
    ["title LIKE 'x' ESCAPE '!'", /unsupported LIKE \.\.\. ESCAPE/],
    ["title LIKE 'x\\'", /LIKE pattern must not end with a single \\/],
    ["title LIKE 'x\\\\\\'", /LIKE pattern must not end with a single \\/],
    ['title LIKE 1', /LIKE needs a string pattern/],
    ['title LIKE brand', /LIKE needs a string pattern/],
    ["'x' LIKE title", /LIKE needs a column on its left/],
    ['id = TRUE', /unsupported boolean literal TRUE/],
    ['id = false', /unsupported boolean literal FALSE/],
    ['id = NULL', /unsupported literal NULL \(use IS NULL\)/],
    ['id IN (NULL)', /unsupported literal NULL/],
    ['id IS TRUE', /unsupported IS TRUE/],
    ["id IS DISTINCT FROM 'a'", /unsupported IS DISTINCT FROM/],
    ["(id = 'a') IS NULL", /expected a column or a literal, found a condition/],
    ["'a' IS NULL", /IS NULL needs a column on its left/],
    ['id IS NULL IS NULL', /expected a column or a literal, found a condition/],
    ["id LIKE 'a' = 'b'", /expected a column or a literal, found a condition/],
    ['id = 1e999999', /number 1e999999 is out of range/],
    ['price = 1e1000', /number 1e1000 is out of range/],
    ['price = -1E-0001000', /number 1E-0001000 is out of range/],
    ["price BETWEEN 1 AND '9'", /BETWEEN bounds must both be strings or both be numbers/],
    ['price BETWEEN brand AND 9', /BETWEEN accepts only string and number literals, found column "brand"/],
    ["id IN ('a', brand)", /IN accepts only string and number literals, found column "brand"/],
    ['id = brand', /cannot compare column "id" with column "brand"/],
    ['1 = 1', /a comparison needs a column on one side/],
    ['id', /expected a condition, found column "id"/],
    ['TRUE', /expected a condition, found a literal/],
    ["id = 'a' AND price", /expected a condition, found column "price"/],
    ['id = (price = 1)', /expected a column or a literal, found a condition/],
    ["id = CASE WHEN 1 THEN 'a' END", /unsupported CASE/],
    ["id = DATE '2020-01-01'", /unsupported typed literal/],
    ["id = INTERVAL '1 day'", /unsupported INTERVAL/],
    ["(id, brand) = ('a', 'b')", /unsupported list in parentheses/],
    ["id = ANY('{a}')", /unsupported ANY/],
    ['*', /syntax error near "\*" at position 1/],
    ['SELECT 1', /^filter: expected a condition, found a query$/],
    ['DROP TABLE x', /syntax error near "TABLE"/],
    ['price = 1L', /unsupported number suffix/],
    ["id = 'a'\n AND colour = 'b'", /unknown column "colour" at position 15/],
    ["id = 'a\0'", /^filter: NUL character at position 8$/],
  ] satisfies [string, RegExp][])('%s', (text, expected) => {
    expect(parseError(text)).toMatch(expected)
  })

  it('every refusal is a 400 naming the filter', () => {
    for (const text of ['SELECT 1', 'DROP TABLE x', 'id = ', ';', '--', '/*', ')', "'", '"', '`']) {
      const message = parseError(text)
      expect(message).toMatch(/^filter: /)
    }
  })

  it('text too long or nested too deeply', () => {
    expect(parseError(`id = '${'x'.repeat(MAX_FILTER_LENGTH)}'`)).toBe(`filter: longer than ${MAX_FILTER_LENGTH} characters`)
    expect(parseError(`${'('.repeat(200)}id = 'a'${')'.repeat(200)}`)).toBe('filter: nested too deeply')
    expect(parseError(`${'NOT '.repeat(200)}id = 'a'`)).toMatch(/^filter: /)
  })

  // The WASM parser breaks for good on a tree deeper than its stack (see MAX_FILTER_LENGTH); the
  // densest chains at the longest accepted text must be refused cleanly and leave it working.
  it('the deepest trees the length allows are refused and the parser keeps working', () => {
    const fill = (head: string, step: string) => head + step.repeat(Math.floor((MAX_FILTER_LENGTH - head.length) / step.length))
    const deep = [
      fill('price = 1', '+1'),
      fill('price = 1', '-1'),
      fill('title = a', '||a'),
      fill('price = 1', '::a'),
      fill("id = '1'", " OR id='1'"),
      fill("id = '1'", " AND id='1'"),
      fill('id', ' IS NULL'),
      fill('id', ' IN (1)'),
      fill('id', " LIKE 'a'"),
      fill('id', ' BETWEEN 1 AND 2'),
      fill('price = a', '->a'),
    ]
    for (const text of deep) {
      expect(text.length).toBeLessThanOrEqual(MAX_FILTER_LENGTH)
      try {
        parseFilter(text, COLUMNS)
      } catch (error) {
        expect(error).toBeInstanceOf(BadRequestError)
      }
    }
    expect(parse(fill("id = '1'", " OR id='1'")).kind).toBe('or')
    expect(parseError(fill('price = 1', '+1'))).toBe('filter: unsupported operator + at position 9')
    expect(parse("brand = 'Acme' AND price > 10")).toEqual({
      kind: 'and',
      items: [eq('brand', 'Acme'), { kind: 'compare', column: 'price', op: '>', value: num('10') }],
    })
  })

  it('BadRequestError is a 400', () => {
    try {
      parse('pg_sleep(1)')
    } catch (error) {
      expect((error as BadRequestError).statusCode).toBe(400)
    }
    expect.assertions(1)
  })
})

describe('filterToSql: nothing from the client becomes SQL text', () => {
  // Compiles without a database: the SQL text and its parameters are what would be sent.
  const db = new Kysely<{ t: { id: string; data: unknown } }>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  })
  const compile = (text: string, columns = COLUMNS) =>
    db
      .selectFrom('t')
      .select('id')
      .where(filterToSql(parseFilter(text, columns), (column) => sql<string>`coalesce(data->>${column}, '')`))
      .compile()

  it('literals and column names are parameters', () => {
    const hostile = "x'); DROP TABLE t; --"
    const query = compile(`"Robert'); DROP TABLE t;--" = 'x''); DROP TABLE t; --' OR title LIKE '%DROP%' OR brand IN ('DROP', 1)`, [
      "Robert'); DROP TABLE t;--",
      'title',
      'brand',
    ])
    expect(query.sql).not.toMatch(/DROP|Robert/)
    expect(query.parameters).toContain(hostile)
    expect(query.parameters).toContain("Robert'); DROP TABLE t;--")
    expect(query.parameters).toContain('%DROP%')
  })

  it('emits explicit parentheses, two-valued leaves and "C" ordering', () => {
    const query = compile("NOT (brand = 'a' OR price > 1) AND title < 'm'")
    expect(query.sql).toContain('(NOT (coalesce(')
    expect(query.sql).toContain(' AND ')
    expect(query.sql).toContain('COLLATE "C" <')
    expect(query.sql).toContain('::numeric')
    expect(query.parameters).toEqual(expect.arrayContaining(['brand', 'a', 'price', '1', 'title', 'm']))
  })

  it('an IN list built by hand with no items holds for nothing', () => {
    const node: FilterNode = { kind: 'in', column: 'id', values: [], negated: false }
    expect(
      db
        .selectFrom('t')
        .select('id')
        .where(filterToSql(node, () => sql<string>`''`))
        .compile().sql,
    ).toContain('coalesce(false, false)')
  })

  it('no filter is true; an empty OR is false', () => {
    expect(compile('').sql).toMatch(/where true$/)
    expect(
      db
        .selectFrom('t')
        .select('id')
        .where(filterToSql({ kind: 'or', items: [] }, () => sql<string>`''`))
        .compile().sql,
    ).toMatch(/where false$/)
  })
})
