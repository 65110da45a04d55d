// bench:cycle's rules section (issue 32): ten typical rules, five of the site (a map, a replace, a
// pattern, a concat, a round) and five of a Google Shopping channel (conditions with three
// operators, an exclude, a truncate, a default, a case), against the same channel without rules on
// the same catalog. The site's rules are switched off for the exports without rules and on for those
// with (each export's stage was made the way it is exported again, so the small update stays
// incremental on both sides). Also: the preview's answer times, and the bytes the rules add on disk.
import path from 'node:path'
import { sql } from 'kysely'
import type { BenchDatabase, BenchSite, ImportTiming } from './support.js'

export interface RulesCycleContext {
  site: BenchSite
  database: BenchDatabase
  dir: string
  /** A TSV channel of the Google mapping with `extra` settings; returns its id. */
  createTsvChannel(name: string, extra: Record<string, string>): Promise<string>
  /** A random 1% of the catalog as a new version, written to `file`. */
  writeChange(file: string, version: number, seed: number): Promise<void>
  /** The channel id of the cycle's channel without a mapping. */
  identityChannelId: string
  /** The full import of the cycle (rules do not run in an import: the same with them and without). */
  fullImportSeconds: number
  /** A channel's export counted until its full file is stored. */
  exportUntilStored(id: string): Promise<ImportTiming>
}

const SITE_RULES = [
  {
    description: 'availability in Google spelling',
    attribute: 'availability',
    then: [{ action: 'map', entries: { 'in stock': 'in_stock', 'out of stock': 'out_of_stock' } }],
  },
  { description: 'Cotton capitalised', attribute: 'description', then: [{ action: 'replace', find: 'cotton', replacement: 'Cotton' }] },
  { description: 'no item number in titles', attribute: 'title', then: [{ action: 'regex_replace', pattern: '\\s+[0-9]+$', replacement: '' }] },
  {
    description: 'title with colour',
    attribute: 'title',
    then: [{ action: 'concat', parts: [{ attribute: 'title' }, { value: '-' }, { attribute: 'color' }] }],
  },
  { description: 'prices with two decimals', attribute: 'price', then: [{ action: 'round', decimals: 2 }] },
]

const CHANNEL_RULES = [
  {
    description: 'premium picks',
    attribute: 'title',
    if: {
      all: [
        { attribute: 'price', operator: 'greater_than', value: '50' },
        { attribute: 'brand', operator: 'in', values: ['Acme', 'Globex', 'Hooli'] },
        { attribute: 'title', operator: 'contains', value: 'premium' },
      ],
    },
    then: [{ action: 'append', value: 'Premium pick', separator: ' – ' }],
  },
  {
    description: 'nothing out of stock',
    if: { all: [{ attribute: 'availability', operator: 'equals', value: 'out_of_stock' }] },
    then: [{ action: 'exclude' }],
  },
  { description: 'titles Google shows whole', attribute: 'title', then: [{ action: 'truncate', max: 150, suffix: '…' }] },
  { description: 'a colour for every product', attribute: 'color', then: [{ action: 'default_if_empty', value: 'multicolor' }] },
  { description: 'brands in capitals', attribute: 'brand', then: [{ action: 'case', to: 'upper' }] },
]

export async function rulesCycle(ctx: RulesCycleContext): Promise<string[]> {
  const { site, database } = ctx
  const post = (url: string, body: unknown) => site.call('POST', `/platform/v2/sites/${site.siteId}${url}`, site.platform, JSON.stringify(body))
  const siteRuleIds: string[] = []
  for (const rule of SITE_RULES) siteRuleIds.push(((await post('/rules', { ...rule, enabled: false })) as { Rules: { id: string }[] }).Rules[0]?.id ?? '')
  const switchSiteRules = async (enabled: boolean) => {
    for (const id of siteRuleIds) await site.call('PUT', `/platform/v2/sites/${site.siteId}/rules/${id}`, site.platform, JSON.stringify({ enabled }))
  }
  const google = { export_name: 'google_shopping', currency: 'EUR' }
  const channelWithRules = async (name: string) => {
    const id = await ctx.createTsvChannel(name, google)
    for (const rule of CHANNEL_RULES) await post(`/channels/${id}/rules`, rule)
    return id
  }
  const settled = async (id: string) => {
    await sql`VACUUM (ANALYZE) stage_product`.execute(database.db)
    return ctx.exportUntilStored(id)
  }
  // Full exports: without rules (site rules off, a channel without rules), with (both on), twice each, in turns.
  const runs: Record<'without' | 'with', { id: string; timing: ImportTiming }[]> = { without: [], with: [] }
  const without = async (round: number) => {
    await switchSiteRules(false)
    const id = await ctx.createTsvChannel(`rules-off-${round}`, google)
    runs.without.push({ id, timing: await settled(id) })
  }
  const withRules = async (round: number) => {
    await switchSiteRules(true)
    const id = await channelWithRules(`rules-on-${round}`)
    runs.with.push({ id, timing: await settled(id) })
  }
  await without(1)
  await withRules(1)
  await withRules(2)
  await without(2)
  const fastest = (list: { timing: ImportTiming }[]) => list.reduce((best, r) => (r.timing.seconds < best.timing.seconds ? r : best))
  const fullWithout = fastest(runs.without)
  const fullWith = fastest(runs.with)
  console.log(
    `rules: full exports without ${runs.without.map((r) => r.timing.seconds.toFixed(2)).join(', ')} s, with ${runs.with.map((r) => r.timing.seconds.toFixed(2)).join(', ')} s`,
  )

  // The small update: 1%, one upload and one import, then each first-round channel exported as its stage was made.
  const change = path.join(ctx.dir, 'change-rules.ndjson')
  await ctx.writeChange(change, 4, 2654435761)
  const started = performance.now()
  await site.uploadFile(change)
  const upload = (performance.now() - started) / 1000
  const importRun = await site.importRun()
  await switchSiteRules(false)
  const smallWithout = await ctx.exportUntilStored(runs.without[0]?.id ?? '')
  await switchSiteRules(true)
  const smallWith = await ctx.exportUntilStored(runs.with[0]?.id ?? '')
  console.log(
    `rules: small update upload ${upload.toFixed(2)} s, import ${importRun.seconds.toFixed(2)} s, export without ${smallWithout.seconds.toFixed(2)} s, with ${smallWith.seconds.toFixed(2)} s`,
  )

  const previews = await previewTimes(ctx, runs.with[0]?.id ?? '')
  const disk = await diskLines(ctx, { without: runs.without[0]?.id ?? '', with: runs.with[0]?.id ?? '' })
  const figures = { fullWithout: fullWithout.timing, fullWith: fullWith.timing, fullImport: ctx.fullImportSeconds, smallImport: importRun }
  return report({ ...figures, upload, smallWithout, smallWith, previews, disk })
}

interface PreviewTimes {
  channelSamples: number
  siteSamples: number
  channelSummary: number
}

/** Median answer times of previews of 50 products (five each), and one channel preview with the whole-stage summary. */
async function previewTimes({ site }: RulesCycleContext, channelId: string): Promise<PreviewTimes> {
  const timed = async (url: string, body: unknown) => {
    const started = performance.now()
    await site.call('POST', `/platform/v2/sites/${site.siteId}${url}`, site.platform, JSON.stringify(body))
    return (performance.now() - started) / 1000
  }
  const median = async (url: string, body: unknown) => {
    const times: number[] = []
    for (let i = 0; i < 5; i++) times.push(await timed(url, body))
    return times.sort((a, b) => a - b)[2] ?? 0
  }
  return {
    channelSamples: await median(`/channels/${channelId}/rules/preview`, { limit: 50, summary: false }),
    siteSamples: await median('/rules/preview', { limit: 50, summary: false }),
    channelSummary: await timed(`/channels/${channelId}/rules/preview`, { limit: 50, summary: true }),
  }
}

/** What the rules add on disk: the intermediate stage (nothing: it is read through the rules), each channel stage's bytes. */
async function diskLines(ctx: RulesCycleContext, channels: { without: string; with: string }): Promise<string[]> {
  // The cycle's channel without a mapping, exported again with the site's rules on: its rows keep data only where the rules changed them.
  await ctx.site.runAction('channel', ctx.identityChannelId)
  const { rows } = await sql<{ stage_id: string; rows: string; kept: string; data: string; line: string }>`
    SELECT stage_id, count(*) AS rows, count(data) AS kept, coalesce(sum(pg_column_size(data)), 0) AS data, coalesce(sum(pg_column_size(line)), 0) AS line
    FROM stage_product WHERE stage = 'channel' AND stage_id IN (${channels.without}, ${channels.with}, ${ctx.identityChannelId}) GROUP BY stage_id`.execute(
    ctx.database.db,
  )
  const mb = (n: string | undefined) => (Number(n ?? 0) / 1e6).toFixed(0)
  const of = (id: string) => rows.find((r) => r.stage_id === id)
  const line = (what: string, id: string) => {
    const r = of(id)
    return `| ${what} | ${Number(r?.rows ?? 0).toLocaleString('en')} | ${Number(r?.kept ?? 0).toLocaleString('en')} | ${mb(r?.data)} | ${mb(r?.line)} |`
  }
  return [
    '| stage_product rows of | rows | rows with data | data MB | line MB |',
    '|---|---:|---:|---:|---:|',
    '| intermediate stage (read through the site rules, never stored) | 0 | 0 | 0 | 0 |',
    line('Google channel without rules', channels.without),
    line('Google channel with its five rules (keeps the rows they changed: every one, brands in capitals)', channels.with),
    line('cycle channel, no mapping, site rules on (keeps the rows they changed)', ctx.identityChannelId),
  ]
}

interface RulesFigures {
  fullWithout: ImportTiming
  fullWith: ImportTiming
  fullImport: number
  smallImport: ImportTiming
  upload: number
  smallWithout: ImportTiming
  smallWith: ImportTiming
  previews: PreviewTimes
  disk: string[]
}

function report(r: RulesFigures): string[] {
  const f = (n: number, digits = 2) => n.toFixed(digits)
  const verdict = (value: number, target: number) => (value <= target ? 'met' : '**not met**')
  // The import is the same with rules and without: they run when the rows are read.
  const fullRatio = (r.fullImport + r.fullWith.seconds) / (r.fullImport + r.fullWithout.seconds)
  const cycleWithout = r.upload + r.smallImport.seconds + r.smallWithout.seconds
  const cycleWith = r.upload + r.smallImport.seconds + r.smallWith.seconds
  return [
    '### Transformation rules (issue 32)',
    '',
    'Two Google Shopping TSV channels of the same mapping: without rules (the site rules off), and with ten rules (five site rules: a map, a replace, a pattern, a concat, a round; five channel rules: conditions with three operators, an exclude of out-of-stock products, a truncate, a default, a case). Full exports twice each in turns, on a vacuumed table, the faster counting; then another 1% uploaded and imported once, and each channel exported, each export counted until its full file is stored. The import is not measured twice: rules run when an export (or a read) reads the rows, so an import is the same with them and without.',
    '',
    '| measure | seconds |',
    '|---|---:|',
    `| full export without rules / with the ten rules | ${f(r.fullWithout.seconds, 1)} / ${f(r.fullWith.seconds, 1)} |`,
    `| full import (the cycle's) + full export, without / with | ${f(r.fullImport + r.fullWithout.seconds, 1)} / ${f(r.fullImport + r.fullWith.seconds, 1)} |`,
    `| small-update cycle without rules: upload of 1% + import + export | ${f(cycleWithout)} (${f(r.upload)} + ${f(r.smallImport.seconds)} + ${f(r.smallWithout.seconds)}) |`,
    `| small-update cycle with the rules | ${f(cycleWith)} (${f(r.upload)} + ${f(r.smallImport.seconds)} + ${f(r.smallWith.seconds)}) |`,
    `| preview of 50 products, channel / site (median of 5, no summary) | ${f(r.previews.channelSamples, 3)} / ${f(r.previews.siteSamples, 3)} |`,
    `| channel preview of 50 products with the whole-stage summary (matches per rule, readiness) | ${f(r.previews.channelSummary)} |`,
    `| peak server RSS in the full export with rules | ${Math.round(r.fullWith.peakMb)} MB |`,
    '',
    '| ratio | value | target | |',
    '|---|---:|---:|---|',
    `| full export with rules / without | ${f(r.fullWith.seconds / r.fullWithout.seconds)} | | |`,
    `| small-update cycle with rules / without | ${f(cycleWith / cycleWithout, 3)} | ≤ 1.10 | ${verdict(cycleWith / cycleWithout, 1.1)} |`,
    `| preview of 50 products (channel) | ${f(r.previews.channelSamples, 3)} s | ≤ 1 s | ${verdict(r.previews.channelSamples, 1)} |`,
    `| whole-stage summary / the channel's full export | ${f(r.previews.channelSummary / r.fullWith.seconds)} | ≤ 1.0 | ${verdict(r.previews.channelSummary / r.fullWith.seconds, 1)} |`,
    `| full import + export with rules / without | ${f(fullRatio)} | ≤ 1.3 | ${verdict(fullRatio, 1.3)} |`,
    '',
    ...r.disk,
    '',
  ]
}
