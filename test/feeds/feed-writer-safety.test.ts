import { createReadStream } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { parse as parseCsv } from 'csv-parse/sync'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FeedFormat } from '../../src/db/schema.js'
import { isXmlName } from '../../src/feeds/feed-writer.js'
import { discardFeedFile, writeFeedFile, createRowsTable, openWriterFixture, writeAndRead, type WriterFixture } from './feed-writer-harness.js'

let f: WriterFixture

beforeAll(async () => {
  f = await openWriterFixture()
})

afterAll(async () => {
  await f.close()
})

describe('hostile column names', () => {
  const names = ['"; DROP TABLE victim; --', `'); DROP TABLE victim; --`, 'back\\slash', 'comma,"quoted"', 'line\nbreak', 'tab\tname', '']
  const data = Object.fromEntries(names.map((name, i) => [name, `value ${i}`]))

  beforeAll(async () => {
    await f.client.query('CREATE TABLE victim (id int)')
    await createRowsTable(f.client, 'hostile_rows', { h1: data, h2: {} })
  })

  it('are written as they are and execute nothing', async () => {
    const select = 'SELECT product_id, data FROM hostile_rows'
    const csv = parseCsv((await writeAndRead(f, select, names, 'csv')).text) as string[][]
    expect(csv).toEqual([names, names.map((_, i) => `value ${i}`), names.map(() => '')])
    const tsv = parseCsv((await writeAndRead(f, select, names, 'tsv')).text, { delimiter: '\t' }) as string[][]
    expect(tsv).toEqual(csv)
    const ndjson = (await writeAndRead(f, select, names, 'ndjson')).text.trim().split('\n')
    const first = JSON.parse(ndjson[0] ?? '') as Record<string, string>
    expect(Object.keys(first)).toEqual(names)
    expect(first).toEqual(data)
    const { rows } = await f.client.query(`SELECT to_regclass('victim') IS NOT NULL AS present`)
    expect(rows[0]).toEqual({ present: true })
  })

  it('are refused by the XML writer', async () => {
    await expect(
      writeFeedFile(
        f.client,
        { selectSql: 'SELECT product_id, data FROM hostile_rows', columns: ['g:id', names[0] as string] },
        'xml',
        path.join(f.dir, 'x.xml'),
        { title: '', link: '' },
      ),
    ).rejects.toThrow(/not a valid XML element name/)
  })
})

describe('isXmlName', () => {
  it('accepts plain names and the g: prefix', () => {
    for (const name of ['g:id', 'title', 'g:custom_label_0', 'a.b-c', '_under', 'item']) expect(isXmlName(name), name).toBe(true)
  })

  it('accepted names come out as written', async () => {
    const names = ['g:custom_label_0', 'a.b-c', '_under', 'item', 'Mixed9']
    await createRowsTable(f.client, 'xml_name_rows', { n1: Object.fromEntries(names.map((n) => [n, n])) })
    const { text } = await writeAndRead(f, 'SELECT product_id, data FROM xml_name_rows', names, 'xml')
    expect(text).toContain(`<item>${names.map((n) => `<${n}>${n}</${n}>`).join('')}</item>\n`)
  })

  it('refuses what would not come out as written', () => {
    for (const name of ['', 'g:', ':a', 'x:id', 'a:b:c', '1abc', 'a b', 'xmlfoo', 'XMLns', 'a_xb', 'ü', 'a'.repeat(64), '"; DROP TABLE x; --', 'a<b']) {
      expect(isXmlName(name), name).toBe(false)
    }
  })
})

describe('transactions and failures', () => {
  it('writes inside the caller transaction, rows it has not committed included', async () => {
    await f.client.query('BEGIN')
    try {
      await createRowsTable(f.client, 'tx_rows', { t1: { a: 'in transaction' } })
      const { text } = await writeAndRead(f, 'SELECT product_id, data FROM tx_rows', ['a'], 'csv')
      expect(text).toBe('a\nin transaction\n')
      const { rows } = await f.client.query('SELECT 1 AS one')
      expect(rows).toEqual([{ one: 1 }])
    } finally {
      await f.client.query('ROLLBACK')
    }
  })

  it('fails on a query error without leaving a file, and the client stays usable', async () => {
    const dir = await fs.mkdtemp(path.join(f.dir, 'failed-'))
    await f.client.query('BEGIN')
    await expect(
      writeFeedFile(f.client, { selectSql: 'SELECT product_id, data FROM no_such_table', columns: ['a'] }, 'csv', path.join(dir, 'feed.csv'), {
        title: '',
        link: '',
      }),
    ).rejects.toThrow(/no_such_table/)
    await f.client.query('ROLLBACK')
    expect(await fs.readdir(dir)).toEqual([])
    expect((await f.client.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }])
  })

  it('fails before the COPY when the file cannot be created', async () => {
    const finalPath = path.join(f.dir, 'missing-dir', 'feed.csv')
    await expect(
      writeFeedFile(f.client, { selectSql: 'SELECT product_id, data FROM hostile_rows', columns: ['a'] }, 'csv', finalPath, { title: '', link: '' }),
    ).rejects.toThrow(/ENOENT/)
    expect((await f.client.query('SELECT 3 AS three')).rows).toEqual([{ three: 3 }])
  })

  it('discardFeedFile removes the temporary file', async () => {
    const finalPath = path.join(f.dir, 'discarded.csv')
    const written = await writeFeedFile(f.client, { selectSql: 'SELECT product_id, data FROM hostile_rows', columns: ['a'] }, 'csv', finalPath, {
      title: '',
      link: '',
    })
    expect(path.dirname(written.tmpPath)).toBe(path.dirname(finalPath))
    expect(path.basename(written.tmpPath)).toMatch(/^\.tmp-[0-9a-f]{16}-discarded\.csv$/)
    await discardFeedFile(written)
    await expect(fs.stat(written.tmpPath)).rejects.toThrow(/ENOENT/)
    await expect(fs.stat(finalPath)).rejects.toThrow(/ENOENT/)
  })
})

describe('large feeds', () => {
  const count = 200_000
  beforeAll(async () => {
    // ~1 KB a row, so a feed held in memory whole would exceed the bound below.
    await f.client.query(`CREATE TEMP TABLE big_rows AS
      SELECT lpad(i::text, 7, '0') AS product_id,
             jsonb_build_object('id', i::text, 'title', 'Product \\ "' || i || E'"\\n\\t', 'body', repeat(md5(i::text), 30)) AS data
      FROM generate_series(1, ${count}) i`)
  }, 60_000)

  async function peakGrowth(format: FeedFormat): Promise<{ growth: number; finalPath: string }> {
    const before = process.memoryUsage().rss
    let peak = before
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5)
    try {
      const { finalPath } = await writeAndReadPath(format)
      peak = Math.max(peak, process.memoryUsage().rss)
      return { growth: peak - before, finalPath }
    } finally {
      clearInterval(sampler)
    }
  }

  async function writeAndReadPath(format: FeedFormat) {
    const finalPath = path.join(f.dir, `big.${format}`)
    const written = await writeFeedFile(f.client, { selectSql: 'SELECT product_id, data FROM big_rows', columns: ['id', 'title', 'body'] }, format, finalPath, {
      title: '',
      link: '',
    })
    await fs.rename(written.tmpPath, finalPath)
    expect((await fs.stat(finalPath)).size).toBe(written.bytes)
    expect(written.bytes).toBeGreaterThan(180 * 1024 * 1024)
    return { finalPath }
  }

  for (const format of ['csv', 'ndjson'] as const) {
    it(`writes ${count} rows of ${format} with flat memory`, async () => {
      const { growth, finalPath } = await peakGrowth(format)
      expect(growth).toBeLessThan(150 * 1024 * 1024)
      // Read back line by line: every row there, escapes undone across chunk boundaries.
      let lines = 0
      let last = ''
      for await (const line of createInterface({ input: createReadStream(finalPath) })) {
        lines++
        last = line
        if (format === 'ndjson' && lines % 997 === 0) expect((JSON.parse(line) as { title: string }).title).toBe(`Product \\ "${lines}"\n\t`)
      }
      if (format === 'ndjson') expect(lines).toBe(count)
      else expect(lines).toBeGreaterThan(count)
      expect(last.length).toBeGreaterThan(900)
      await fs.rm(finalPath)
    }, 120_000)
  }
})
