import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { history } from '../helpers/clients.js'
import { diagnostics, files, goodProduct, googleChannel, idsOf, summary, type Row, type Summary } from './template-fixture.js'

// Checking costs what the change costs (issue 24): after a small update only the changed rows are
// checked again, and the counts are carried forward from the change. Whatever that saves, the
// diagnostics, the counts, the feed and the skipped file of a channel exported incrementally
// must be exactly those of a channel checking every row once: a twin created after each round.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

const bad: Record<string, Row> = {
  price: { price: 'ten euros' },
  title: { title: 'x'.repeat(151) },
  gtin: { gtin: '4006381333932' },
  link: { link: 'shop.example.com/p' },
  brand: { brand: '', gtin: '', mpn: '' },
}

/** What a summary says that does not depend on which channel or run it is. */
function counts(s: Summary) {
  const { channel_id: _c, exported_at: _e, pid: _p, links: _l, ...rest } = s
  return rest
}

async function exportTwin(f: ImportFixture): Promise<string> {
  const twin = await googleChannel(f, { name: 'Twin' })
  await f.run('channel', { id: Number(twin.id) })
  return twin.id
}

async function expectSameAsFullCheck(f: ImportFixture, channelId: string): Promise<void> {
  const twin = await exportTwin(f)
  expect(counts(await summary(f, channelId))).toEqual(counts(await summary(f, twin)))
  expect(await diagnostics(f, channelId)).toEqual(await diagnostics(f, twin))
  const [mine, theirs] = [await files(t, f, channelId), await files(t, f, twin)]
  expect(mine.full).toBe(theirs.full)
  expect(mine.skipped).toBe(theirs.skipped)
  const removed = await f.c.del(`/sites/${f.site.id}/channels/${twin}`)
  expect(removed.statusCode, removed.body).toBe(200)
}

describe('checks after small updates', () => {
  it('give what checking every row once gives, round after round, and count a fixed product as new to the feed', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    const catalog = Array.from({ length: 30 }, (_, i) => {
      const kind = Object.keys(bad)[i % 6]
      return goodProduct(`P${String(i).padStart(2, '0')}`, kind ? bad[kind] : {})
    })
    expect((await f.upload(stream, catalog)).statusCode).toBe(202)
    const channel = await googleChannel(f)
    expect((await f.run('all')).status).toBe('success')
    const first = await summary(f, channel.id)
    // price, title, link and brand fail required rules (errors, left out); an invalid gtin is an error too.
    expect(first).toMatchObject({ products_checked: 30, products_left_out: 25, products_exported: 5 })
    await expectSameAsFullCheck(f, channel.id)

    // Round 2: three left-out products fixed, two good ones broken, two good ones changed.
    const fixed = ['P00', 'P01', 'P02'].map((id) => goodProduct(id))
    const broken = ['P05', 'P11'].map((id) => goodProduct(id, { price: '' }))
    const changed = ['P17', 'P23'].map((id) => goodProduct(id, { title: `Shirt ${id}, now in blue` }))
    expect((await f.upload(stream, [...fixed, ...broken, ...changed])).statusCode).toBe(202)
    expect((await f.run('all')).status).toBe('success')
    const [latest] = await history(f, channel.id)
    expect(latest).toMatchObject({ product_count_new: '3', product_count_deleted: '2', product_count_modified: '2', product_count_skipped: '24' })
    const skipped = idsOf((await files(t, f, channel.id)).skipped ?? '')
    expect(skipped).toEqual(expect.arrayContaining(['P05', 'P11']))
    expect(skipped).not.toContain('P00')
    await expectSameAsFullCheck(f, channel.id)

    // Round 3: a left-out and a good product deleted, three new ones of which one fails.
    expect((await f.deleteProducts(stream, ['P03', 'P17'])).statusCode).toBe(202)
    expect((await f.upload(stream, [goodProduct('Q1'), goodProduct('Q2'), goodProduct('Q3', { availability: 'soon' })])).statusCode).toBe(202)
    expect((await f.run('all')).status).toBe('success')
    expect((await history(f, channel.id))[0]).toMatchObject({ product_count_new: '2', product_count_deleted: '1' })
    await expectSameAsFullCheck(f, channel.id)

    // Round 4: nothing changed: nothing counted as changed, the same diagnostics.
    const before = await diagnostics(f, channel.id)
    expect((await f.run('all')).status).toBe('success')
    expect((await history(f, channel.id))[0]).toMatchObject({ product_count_new: '0', product_count_modified: '0', product_count_deleted: '0' })
    expect(await diagnostics(f, channel.id)).toEqual(before)

    // Round 5: more than 1,000 rows changed, which an export compares in one pass over both stages.
    const many = Array.from({ length: 1100 }, (_, i) => goodProduct(`M${String(i).padStart(4, '0')}`, i % 10 === 0 ? bad.price : {}))
    expect((await f.upload(stream, many)).statusCode).toBe(202)
    expect((await f.run('all')).status).toBe('success')
    expect((await history(f, channel.id))[0]).toMatchObject({ product_count_new: '990' })
    await expectSameAsFullCheck(f, channel.id)
  })

  it('check every row again when the template setting changes: warn_only exports the left-out products, exclude leaves them out again', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    await f.upload(stream, [goodProduct('A'), goodProduct('B', bad.price), goodProduct('C', bad.title)])
    const channel = await googleChannel(f)
    await f.run('all')
    expect(await summary(f, channel.id)).toMatchObject({ products_exported: 1, products_left_out: 2, readiness_score: 1 / 3 })
    expect((await f.c.put(`/sites/${f.site.id}/channels/${channel.id}`, { validation_mode: 'warn_only' })).statusCode).toBe(200)
    await f.run('all')
    // B and C are exported with their errors; A has only the currency added (an info).
    expect(await summary(f, channel.id)).toMatchObject({ products_exported: 3, products_left_out: 0, products_exported_with_warnings: 2 })
    expect((await history(f, channel.id))[0]).toMatchObject({ product_count_new: '2', product_count_skipped: '0' })
    expect(idsOf((await files(t, f, channel.id)).full ?? '')).toEqual(['A', 'B', 'C'])
    expect((await f.c.put(`/sites/${f.site.id}/channels/${channel.id}`, { validation_mode: 'exclude' })).statusCode).toBe(200)
    await f.run('all')
    expect((await history(f, channel.id))[0]).toMatchObject({ product_count_deleted: '2', product_count_skipped: '2' })
    expect(idsOf((await files(t, f, channel.id)).full ?? '')).toEqual(['A'])
    await expectSameAsFullCheck(f, channel.id)
  })
})
