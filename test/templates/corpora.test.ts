import { beforeAll, describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { diagnosticProblems, expectedSummary, feedProblems, skippedProblems, statementProblems } from './corpora/corpus-checks.js'
import type { CorpusProduct } from './corpora/corpus-kit.js'
import { runCorpus, type CorpusRun } from './corpora/corpus-run.js'
import { googleDirtyProducts } from './corpora/google-dirty.js'
import { googleCleanProducts } from './corpora/google-profiles.js'
import { idealoCorpus } from './corpora/idealo-corpus.js'
import { metaCorpus } from './corpora/meta-corpus.js'

// A corpus per built-in template (issue 31): products as real shops export them, each naming where
// its spellings come from and stating what the channel's specification makes of it. Through the
// platform's interfaces only: one upload, one run of `all`, then every product is in the feed with
// the canonical spelling of its values or in the skipped file with its first error, and its
// diagnostics list exactly the codes it states.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

interface Corpus {
  template: string
  products: () => CorpusProduct[]
  /** The channels of the template: a name and the body of its creation (format, …). */
  channels: Record<string, Record<string, unknown>>
  /** The feed column a product is found by. */
  key: string
}

const CORPORA: Corpus[] = [
  {
    template: 'google_shopping',
    products: () => [...googleCleanProducts(), ...googleDirtyProducts()],
    channels: { xml: { format: 'xml' }, tsv: { format: 'tsv' } },
    key: 'id',
  },
  { template: 'meta_catalog', products: metaCorpus, channels: { csv: { format: 'csv' } }, key: 'id' },
  // idealo's sku is its own column: a product can lack one (the stream's id never can).
  { template: 'idealo', products: idealoCorpus, channels: { csv: { format: 'csv' } }, key: 'sku' },
]

const listed = (problems: string[]) => (problems.length === 0 ? 'none' : `${problems.length}:\n${problems.join('\n')}`)

describe.each(CORPORA)('the $template corpus', ({ template, products: build, channels, key }) => {
  const products = build()
  let run: CorpusRun | undefined
  const get = () => run ?? expect.fail('the corpus did not run')
  beforeAll(async () => {
    run = await runCorpus(t, template, products, channels, key)
  }, 120_000)

  it('has at least 200 products with distinct ids, each naming its source, most of them exported', () => {
    expect(products.length).toBeGreaterThanOrEqual(200)
    expect(new Set(products.map((p) => p.id)).size).toBe(products.length)
    expect(products.filter((p) => p.source.trim() === '').map((p) => p.id)).toEqual([])
    const exported = products.filter((p) => p.expect.exported).length
    expect(exported / products.length).toBeGreaterThan(0.75)
    expect(exported).toBeLessThan(products.length)
  })

  it('states, per product, codes of the template and exported exactly when none is an error', () => {
    expect(listed(statementProblems(products, get().template))).toBe('none')
  })

  describe.each(Object.keys(channels))('in format %s', (channel) => {
    const read = () => get().channels[channel] ?? expect.fail(`no channel ${channel}`)

    it('exports every product the specification accepts, each value in its canonical spelling or as sent', () => {
      expect(listed(feedProblems(products, read(), get().columns, key))).toBe('none')
    })

    it('lists every product it rejects in the skipped file with its first error and the value that failed', () => {
      expect(listed(skippedProblems(products, read(), get().template))).toBe('none')
      expect(read().skipped.size).toBe(products.filter((p) => !p.expect.exported).length)
    })

    it('lists exactly the codes each product states in its diagnostics, quoting the value as stored', () => {
      expect(listed(diagnosticProblems(products, read(), get().template))).toBe('none')
    })

    it('counts the corpus in its summary', () => {
      const { counts, byCode } = expectedSummary(products, get().template)
      const summary = read().summary
      expect(summary).toMatchObject({ validation_mode: 'exclude', ...counts })
      expect(Object.fromEntries(summary.by_code.map((c) => [c.code, c.count]))).toEqual(byCode)
    })
  })
})
