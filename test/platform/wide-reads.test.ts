import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../imports/import-fixtures.js'
import { HIGH_LIMITS } from '../stream/stream-fixtures.js'

// The widest stage the default bounds allow (MAX_STAGE_COLUMNS 1,000 columns) read 1,000 rows at a
// time (issue 10, finding 1): the page is read in slices and written row by row, within
// PRODUCT_READ_MAX_BYTES, so the process stays within its memory bound and keeps serving others.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })
const COLUMNS = 1000
const ROWS = 1000
let f: ImportFixture
/** The same database through an app with a small read budget (4 MB). */
let budgeted: FastifyInstance

beforeAll(async () => {
  f = await importFixture(t)
  const stream = await f.createStream()
  await f.attach(stream)
  const names = Array.from({ length: COLUMNS - 1 }, (_, i) => `attribute_${String(i).padStart(3, '0')}`)
  const lines = Array.from({ length: ROWS }, (_, r) => JSON.stringify(Object.fromEntries([['id', `P${String(r).padStart(4, '0')}`], ...names.map((name) => [name, `v${r}`])])))
  expect((await f.upload(stream, lines.join('\n'))).statusCode).toBe(202)
  expect((await f.run()).status).toBe('success')
  budgeted = await buildApp({ db: t.db, config: loadConfig({ LOG_LEVEL: 'silent', RUN_CONCURRENCY: '0', SCHEDULER_INTERVAL_SECONDS: '0', PRODUCT_READ_MAX_BYTES: String(4 * 1024 * 1024) }), logger: false })
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
    let peak = process.memoryUsage().rss
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
    expect(peak).toBeLessThan(500 * 1024 * 1024)
  })

  it('pages through the slices in order: a large page is the small pages put together', async () => {
    const large = read(t.app, 'limit=300&offset=350&fields=id,attribute_010')
    const small = [350, 450, 550].map((offset) => read(t.app, `limit=100&offset=${offset}&fields=id,attribute_010`))
    const ids = (response: Awaited<typeof large>) => response.json<{ products: { id: string }[] }>().products.map((p) => p.id)
    const pages = await Promise.all(small)
    expect(ids(await large)).toEqual(pages.flatMap(ids))
    expect(ids(await large)[0]).toBe('P0350')
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
