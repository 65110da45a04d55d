import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { eventually } from '../helpers/eventually.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'

// The widest stage the default bounds allow (MAX_STAGE_COLUMNS 1,000 columns) read 1,000 rows at a
// time (issue 10, finding 1): the page is read in slices and written row by row, within
// PRODUCT_READ_MAX_BYTES, so the process stays within its memory bound and keeps serving others.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })
const COLUMNS = 1000
const ROWS = 1000
let f: ImportFixture
/** The same database through an app with a small read budget (4 MB, 2 reads per account, 3 s). */
let budgeted: FastifyInstance

beforeAll(async () => {
  f = await importFixture(t)
  const stream = await f.createStream()
  await f.attach(stream)
  const names = Array.from({ length: COLUMNS - 1 }, (_, i) => `attribute_${String(i).padStart(3, '0')}`)
  const lines = Array.from({ length: ROWS }, (_, r) =>
    JSON.stringify(Object.fromEntries([['id', `P${String(r).padStart(4, '0')}`], ...names.map((name) => [name, `v${r}`])])),
  )
  expect((await f.upload(stream, lines.join('\n'))).statusCode).toBe(202)
  expect((await f.run()).status).toBe('success')
  budgeted = await buildApp({
    db: t.db,
    config: loadConfig({
      LOG_LEVEL: 'silent',
      RUN_CONCURRENCY: '0',
      SCHEDULER_INTERVAL_SECONDS: '0',
      PRODUCT_READ_MAX_BYTES: String(4 * 1024 * 1024),
      READS_PER_ACCOUNT: '2',
      PRODUCT_READ_TIMEOUT_MS: '3000',
    }),
    logger: false,
  })
  await budgeted.ready()
}, 120_000)

afterAll(async () => {
  await budgeted?.close()
})

const read = (app: FastifyInstance, query: string) =>
  app.inject({ method: 'GET', url: `/product/v2/site/${f.site.id}/stage/intermediate/?${query}`, headers: f.account.platform })

describe('a read of the widest allowed stage', () => {
  it('answers 1,000 rows of 1,000 columns within the memory bound, and another account is answered meanwhile', async () => {
    const other = await t.account('other reader')
    const before = process.memoryUsage().rss
    let peak = before
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss)
    }, 5)
    let readDone = false
    let otherDoneFirst = false
    try {
      const wide = read(t.app, 'limit=1000').then((response) => {
        readDone = true
        return response
      })
      const projects = await t.request({ method: 'GET', url: '/platform/v2/projects', headers: other.platform })
      otherDoneFirst = !readDone
      expect(projects.statusCode).toBe(200)
      const response = await wide
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toMatch(/^application\/json/)
      const body = response.json<{ success: boolean; products: Record<string, string>[] }>()
      expect(body.success).toBe(true)
      expect(body.products).toHaveLength(ROWS)
      expect(Object.keys(body.products[0] ?? {})).toHaveLength(COLUMNS)
      expect(body.products[999]).toMatchObject({ id: 'P0999', attribute_000: 'v999', attribute_998: 'v999' })
    } finally {
      clearInterval(sampler)
    }
    expect(otherDoneFirst).toBe(true)
    // What the read added to the process (about 70 MB when measured; the test files of the processes
    // lane share one process, vitest.config.ts): pages built whole would hold every row at once.
    expect(peak - before).toBeLessThan(150 * 1024 * 1024)
  })

  it('pages through the slices in order: a large page is the small pages put together', async () => {
    // Whole rows of ~14 KB: a page of 300 comes in slices of at most ~4 MB.
    const large = await read(t.app, 'limit=300&offset=350')
    const ids = (response: typeof large) => response.json<{ products: { id: string }[] }>().products.map((p) => p.id)
    const pages = []
    for (const offset of [350, 450, 550]) pages.push(await read(t.app, `limit=100&offset=${offset}&fields=id`))
    expect(ids(large)).toHaveLength(300)
    expect(ids(large)).toEqual(pages.flatMap(ids))
    expect(ids(large)[0]).toBe('P0350')
  })
})

describe('PRODUCT_READ_MAX_BYTES', () => {
  it('refuses a page that would pass the budget with a 400 saying what to ask instead', async () => {
    const response = await read(budgeted, 'limit=1000')
    expect(response.statusCode).toBe(400)
    const { success, message } = response.json<{ success: boolean; message: string }>()
    expect(success).toBe(false)
    expect(message).toMatch(/read budget of 4194304 bytes \(PRODUCT_READ_MAX_BYTES\)/)
    expect(message).toMatch(/fields/)
    const fits = Number(/limit=(\d+) fits/.exec(message)?.[1])
    expect(fits).toBeGreaterThan(0)
    expect(fits).toBeLessThan(1000)
    // What the message says fits does.
    const smaller = await read(budgeted, `limit=${fits}`)
    expect(smaller.statusCode, smaller.body.slice(0, 200)).toBe(200)
    expect(smaller.json<{ products: unknown[] }>().products).toHaveLength(fits)
  })

  it('answers the same rows with fewer columns', async () => {
    const response = await read(budgeted, 'limit=1000&fields=id,attribute_500')
    expect(response.statusCode).toBe(200)
    const { products } = response.json<{ products: Record<string, string>[] }>()
    expect(products).toHaveLength(ROWS)
    expect(products[5]).toEqual({ id: 'P0005', attribute_500: 'v5' })
  })
})

describe('rows of a few MB', () => {
  it('are read for the asked fields only, and measured once each: the ids of 40 rows of 1 MB come back at once', async () => {
    const big = await importFixture(t)
    const stream = await big.createStream()
    await big.attach(stream)
    const value = 'é'.repeat(500_000)
    for (let part = 0; part < 4; part++) {
      const lines = Array.from({ length: 10 }, (_, i) => JSON.stringify({ id: `B${part}${i}`, title: value, other: 'x' }))
      expect((await big.upload(stream, lines.join('\n'))).statusCode).toBe(202)
    }
    expect((await big.run()).status).toBe('success')
    const url = `/product/v2/site/${big.site.id}/stage/import/0`
    const ids = await budgeted.inject({ method: 'GET', url: `${url}?limit=1000&fields=id,other`, headers: big.account.platform })
    expect(ids.statusCode, ids.body.slice(0, 300)).toBe(200)
    expect(ids.json<{ products: unknown[] }>().products).toHaveLength(40)
    expect(ids.json<{ products: unknown[] }>().products[0]).toEqual({ id: 'B00', other: 'x' })
    // Whole rows (500,000 two-byte characters, 1 MB each) pass the 4 MB budget after four: refused, saying so.
    const whole = await budgeted.inject({ method: 'GET', url: `${url}?limit=1000`, headers: big.account.platform })
    expect(whole.statusCode).toBe(400)
    expect(whole.json<{ message: string }>().message).toMatch(/4 of the 1000 rows asked fit.*limit=4 fits/)
  })
})

describe('product reads that hold their connection', () => {
  it('are READS_PER_ACCOUNT at a time per account (429 above), and end at PRODUCT_READ_TIMEOUT_MS with a 503', async () => {
    const other = await t.account('other reader 2')
    const holder = new pg.Client({ connectionString: t.database.url })
    await holder.connect()
    try {
      await holder.query('BEGIN')
      await holder.query('LOCK TABLE stage_product IN ACCESS EXCLUSIVE MODE')
      const stuck = [read(budgeted, 'limit=5'), read(budgeted, 'limit=5')]
      // Both reads hold their slot (waiting for the lock) before the third is sent.
      await eventually(async () => {
        const { rows } = await holder.query<{ n: string }>("SELECT count(*) AS n FROM pg_locks WHERE relation = 'stage_product'::regclass AND NOT granted")
        return Number(rows[0]?.n) >= 2
      }, 'both reads to wait for the lock')
      const third = await read(budgeted, 'limit=5')
      expect(third.statusCode).toBe(429)
      expect(third.headers['retry-after']).toBe('1')
      expect(third.json<{ success: boolean; message: string }>()).toMatchObject({
        success: false,
        message: expect.stringMatching(/READS_PER_ACCOUNT/) as unknown,
      })
      // Another account's requests are answered meanwhile.
      expect((await budgeted.inject({ method: 'GET', url: '/platform/v2/projects', headers: other.platform })).statusCode).toBe(200)
      for (const response of await Promise.all(stuck)) {
        expect(response.statusCode).toBe(503)
        expect(response.json<{ message: string }>().message).toMatch(/longer than 3000 ms \(PRODUCT_READ_TIMEOUT_MS\)/)
      }
    } finally {
      await holder.query('ROLLBACK')
      await holder.end()
    }
    expect((await read(budgeted, 'limit=5')).statusCode).toBe(200)
  })
})
