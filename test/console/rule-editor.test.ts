import { describe, expect, it } from 'vitest'
import { createChannel } from '../helpers/clients.js'
import { importFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { addRule, importedSite, listRules, plainChannel } from '../rules/rule-fixture.js'
import { goodProduct } from '../templates/template-fixture.js'
import { consoleUser } from './console-session.js'
import { elementWith, textOf, unescapeAttribute } from './held-site.js'

// The rule editor of the console (issue 32) through HTTP: a mistake comes back as the page with the
// field's message and every field as typed; rows are added and removed by the server; the preview
// shows before and after, the matches over the stage and a channel's readiness, and saves nothing;
// the JSON text stands in for the form; a diagnostics code's "Fix with a rule" prefills the editor.

const t = useTestApp(HIGH_LIMITS)

const ROWS = [
  { id: 'A1', title: 'Shirt', brand: 'Acme', availability: 'yes', price: '10' },
  { id: 'A2', title: 'Socks', brand: 'Bolt', availability: 'no', price: '4' },
  { id: 'A3', title: 'Scarf', brand: 'Acme', availability: 'yes', price: '19' },
]

async function shop() {
  const f = await importFixture(t, { title: 'Edited shop' })
  await importedSite(f, ROWS)
  const channelId = await plainChannel(f, 'csv', { name: 'CSV feed' })
  expect((await f.run('export-all')).status).toBe('success')
  const user = await consoleUser(t.app, f.account.xAuthToken)
  const csrf = await user.csrf()
  return { f, channelId, user, csrf, sitePath: `/console/sites/${f.site.id}/rules`, channelPath: `/console/sites/${f.site.id}/channels/${channelId}/rules` }
}

const form = (fields: Record<string, string>) => ({ attribute: 'availability', enabled: '1', match: 'all', then0_action: 'map', ...fields })

/** The value of the field `name` (an input's value or a textarea's text) as the page shows it. */
function field(body: string, name: string): string | undefined {
  const input = new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`).exec(body)?.[1]
  const area = new RegExp(`<textarea[^>]*name="${name}"[^>]*>([^<]*)</textarea>`).exec(body)?.[1]
  const found = input ?? area
  return found === undefined ? undefined : unescapeAttribute(found)
}

/** The preview's rows of sample products, as text. */
function sampleRows(body: string): string[] {
  const table = body.slice(body.indexOf('id="preview-products"'))
  return [...table.matchAll(/<tr data-product="[^"]*">([\s\S]*?)<\/tr>/g)].map((row) => textOf(row[1] ?? '').trim())
}

describe('the rule editor', () => {
  it('answers a mistake with the page, the message next to the form and the row it names, every field as typed', async () => {
    const { f, channelId, user, csrf, channelPath } = await shop()
    const mistakes: [Record<string, string>, string, string][] = [
      [form({ then0_action: 'truncate', then0_max: 'abc', then0_suffix: '…' }), 'then[0].max: must be a whole number from 1 to 100000', 'then0'],
      [form({ then0_entries: 'yes => in_stock\nmaybe' }), 'then[0].entries: line 2 "maybe" has no "=>"', 'then0'],
      [
        form({ c0_attribute: 'price', c0_operator: 'greater_than', c0_value: 'ten', then0_entries: 'yes => in_stock' }),
        'if.all[0].value: must be a number',
        'c0',
      ],
      [form({ attribute: '', then0_action: 'set', then0_value: 'x' }), 'attribute: is required', ''],
      [form({ then0_action: 'regex_replace', then0_pattern: '(a)\\1', then0_replacement: 'b' }), 'then[0].pattern: back-references', 'then0'],
      // Neither all nor any: refused by name, not saved as all.
      [form({ match: 'some', c0_attribute: 'brand', c0_value: 'Acme' }), 'match: "some" is neither all nor any', ''],
    ]
    for (const [fields, message, row] of mistakes) {
      const answer = await user.post(`${channelPath}/new`, { _csrf: csrf, ...fields, op: 'save' })
      expect(answer.status, message).toBe(400)
      expect(textOf(elementWith(answer.body, 'id="rule-problem"', 'p'))).toContain(message)
      if (row) expect(textOf(elementWith(answer.body, `id="${row}-problem"`, 'p'))).toContain(message)
      for (const [name, value] of Object.entries(fields)) {
        if (!['enabled', 'match', 'then0_action', 'c0_operator'].includes(name)) expect(field(answer.body, name), name).toBe(value)
      }
      expect(answer.body).toMatch(new RegExp(`<option value="${fields.then0_action}"\\s+selected>`))
    }
    const json = await user.post(`${channelPath}/new`, { _csrf: csrf, ...form({}), json: '{"attribute": "title", then: []}', op: 'save_json' })
    expect(json.status).toBe(400)
    expect(textOf(json.body)).toContain('json: not valid JSON')
    expect(field(json.body, 'json')).toBe('{"attribute": "title", then: []}')
    expect(await listRules(f, channelId)).toEqual([])
  })

  it('saves a map of the 1,000 entries a rule may have, whole, however long its text once percent-encoded', async () => {
    const { f, channelId, user, csrf, channelPath } = await shop()
    // About 90,000 characters, 250 KB as a form: each "ü" and "→" is sent as 6 and 9 bytes.
    const entries = Array.from({ length: 1000 }, (_, i) => [`Größe ${i} – Übergröße für Damen`, `Damenmode → Übergrößen → ${i}`] as const)
    const text = entries.map(([from, to]) => `${from} => ${to}`).join('\n')
    const answer = await user.post(`${channelPath}/new`, { _csrf: csrf, ...form({ then0_entries: text }), op: 'save' })
    expect(answer.status, answer.body.slice(0, 300)).toBe(303)
    const [saved] = await listRules(f, channelId)
    const map = saved?.then[0] as { entries: Record<string, string> }
    expect(Object.entries(map.entries)).toEqual(entries)
  })

  it('adds and removes condition and action rows on the server, keeping what was typed', async () => {
    const { user, csrf, sitePath } = await shop()
    const fields = form({ c0_attribute: 'brand', c0_operator: 'equals', c0_value: 'Acme', then0_entries: 'yes => in_stock' })
    const added = await user.post(`${sitePath}/new`, { _csrf: csrf, ...fields, op: 'add_condition' })
    expect(added.status).toBe(200)
    expect(field(added.body, 'c0_value')).toBe('Acme')
    expect(added.body).toContain('name="c1_attribute"')
    const otherwise = await user.post(`${sitePath}/new`, { _csrf: csrf, ...fields, op: 'add_else' })
    expect(otherwise.body).toContain('name="else0_action"')
    const removed = await user.post(`${sitePath}/new`, { _csrf: csrf, ...fields, c1_attribute: 'price', c1_operator: 'is_empty', op: 'remove_c_0' })
    expect(field(removed.body, 'c0_attribute')).toBe('price')
    expect(removed.body).not.toContain('name="c1_attribute"')
    // The JSON text follows the form.
    expect(JSON.parse(field(removed.body, 'json') ?? '{}')).toMatchObject({ if: { all: [{ attribute: 'price', operator: 'is_empty' }] } })
  })

  it('previews a channel rule: before and after, the matches, the readiness and the checks, saving nothing', async () => {
    const { f, channelId, user, csrf, channelPath } = await shop()
    const saved = await addRule(f, { attribute: 'title', then: [{ action: 'case', to: 'upper' }] }, channelId)
    const fields = form({ then0_entries: 'yes => in_stock\nno => out_of_stock', op: 'preview' })
    const answer = await user.post(`${channelPath}/new`, { _csrf: csrf, ...fields })
    expect(answer.status, answer.body).toBe(200)
    const text = textOf(elementWith(answer.body, 'id="preview"'))
    expect(text).toContain("Over the channel's products (through its filter): 3 products; the rules change 3 and leave out 0")
    expect(text).toMatch(/1 Write title in upper case 3 2 Map availability through 2 values \(this rule\) 3/)
    expect(sampleRows(answer.body)).toEqual([
      expect.stringMatching(/^A1 yes in_stock title: Shirt → SHIRT “then” ran/),
      expect.stringMatching(/^A2 no out_of_stock title: Socks → SOCKS “then” ran/),
      expect.stringMatching(/^A3 yes in_stock/),
    ])
    expect(field(answer.body, 'then0_entries')).toBe('yes => in_stock\nno => out_of_stock')

    const one = await user.post(`${channelPath}/${saved.id}`, {
      _csrf: csrf,
      attribute: 'title',
      enabled: '1',
      then0_action: 'prepend',
      then0_value: 'New',
      then0_separator: ' ',
      c0_attribute: 'brand',
      c0_operator: 'equals',
      c0_value: 'Acme',
      preview_changed: '1',
      preview_id: 'A3',
      op: 'preview',
    })
    expect(sampleRows(one.body)).toEqual([expect.stringMatching(/^A3 Scarf New Scarf\s+“then” ran/)])
    expect(await listRules(f, channelId)).toEqual([expect.objectContaining({ id: saved.id, then: [{ action: 'case', to: 'upper' }] })])

    const badFilter = await user.post(`${channelPath}/new`, { _csrf: csrf, ...fields, preview_filter: 'price >' })
    expect(badFilter.status).toBe(400)
    expect(textOf(elementWith(badFilter.body, 'id="preview"'))).toContain('filter')
  })

  it('previews a site rule, and the JSON text in place of the form; a rule with nested groups is edited as JSON', async () => {
    const { f, user, csrf, sitePath } = await shop()
    const json = JSON.stringify({
      attribute: 'title',
      if: { any: [{ attribute: 'brand', operator: 'equals', value: 'Bolt' }] },
      then: [{ action: 'append', value: '!' }],
    })
    const answer = await user.post(`${sitePath}/new`, { _csrf: csrf, ...form({}), json, op: 'preview_json' })
    expect(answer.status, answer.body).toBe(200)
    expect(textOf(elementWith(answer.body, 'id="preview"'))).toContain('Over the import stage: 3 products; the rules change 1 and leave out 0')
    expect(sampleRows(answer.body)[1]).toMatch(/^A2 Socks Socks! “then” ran/)
    // The JSON previewed fills the form.
    expect(field(answer.body, 'attribute')).toBe('title')
    expect(field(answer.body, 'c0_value')).toBe('Bolt')

    const nested = await addRule(f, {
      attribute: 'title',
      if: {
        all: [
          {
            any: [
              { attribute: 'brand', operator: 'equals', value: 'Acme' },
              { attribute: 'price', operator: 'less_than', value: '5' },
            ],
          },
        ],
      },
      then: [{ action: 'trim' }],
    })
    const page = await user.get(`${sitePath}/${nested.id}`)
    expect(textOf(page.body)).toContain('edit it as JSON below')
    expect(page.body).not.toContain('name="c0_attribute"')
    const text = field(page.body, 'json') ?? ''
    const saved = await user.post(`${sitePath}/${nested.id}`, { _csrf: csrf, json_only: '1', json: text.replace('"trim"', '"strip_html"'), op: 'save_json' })
    expect(saved.status, saved.body).toBe(303)
    expect((await listRules(f))[0]?.then).toEqual([{ action: 'strip_html' }])
  })

  it('offers "Fix with a rule" for each failing code of a channel\'s diagnostics, prefilling the editor', async () => {
    const f = await importFixture(t, { title: 'Google shop' })
    await importedSite(f, [
      goodProduct('G1', { availability: 'instock' }),
      goodProduct('G2', { availability: 'lagernd' }),
      goodProduct('G3', { title: 'x'.repeat(160) }),
      goodProduct('G4', { description: '' }),
      goodProduct('G5', { price: '19.99' }),
    ])
    const google = await createChannel(f, { name: 'Google DE', export_name: 'google_shopping', format: 'xml', currency: 'EUR' })
    expect((await f.run('export-all')).status).toBe('success')
    const user = await consoleUser(t.app, f.account.xAuthToken)
    const page = await user.get(`/console/sites/${f.site.id}/channels/${google.id}/diagnostics`)
    const href = (code: string) => unescapeAttribute(new RegExp(`<a href="([^"]+)" aria-label="Fix ${code} with a rule">`).exec(page.body)?.[1] ?? '')
    const editor = `/console/sites/${f.site.id}/channels/${google.id}/rules/new`
    const map = new URL(href('availability_invalid_value'), 'http://x')
    expect(map.pathname).toBe(editor)
    expect(Object.fromEntries(map.searchParams)).toMatchObject({
      attribute: 'availability',
      then0_action: 'map',
      then0_entries: 'instock => in_stock\nlagernd => ',
    })
    expect(Object.fromEntries(new URL(href('title_too_long'), 'http://x').searchParams)).toMatchObject({ then0_action: 'truncate', then0_max: '150' })
    expect(Object.fromEntries(new URL(href('description_missing'), 'http://x').searchParams)).toMatchObject({ then0_action: 'default_if_empty' })
    // A note tells what the template did (the currency added to a bare price): nothing to fix, no link.
    expect(textOf(page.body)).toContain('price_currency_added')
    expect(href('price_currency_added')).toBe('')

    const prefilled = await user.get(href('availability_invalid_value'))
    expect(prefilled.status).toBe(200)
    expect(textOf(prefilled.body)).toContain('Fixing availability_invalid_value')
    expect(field(prefilled.body, 'attribute')).toBe('availability')
    expect(field(prefilled.body, 'then0_entries')).toBe('instock => in_stock\nlagernd => ')
    expect(prefilled.body).toMatch(/<option value="map"\s+selected>/)
  })
})

describe('the site page without JavaScript', () => {
  it('says where a run it started is, its message, and links to its results, as the page was made', async () => {
    const f = await importFixture(t, { title: 'No script shop' })
    await importedSite(f, [{ id: 'N1', title: 'One' }])
    const user = await consoleUser(t.app, f.account.xAuthToken)
    const started = await user.post(`/console/sites/${f.site.id}/runs`, { action: 'import', _csrf: await user.csrf(`/console/sites/${f.site.id}`) })
    expect(started.status).toBe(303)
    const pid = new URL(started.location ?? '', 'http://x').searchParams.get('run') ?? ''
    expect((await f.waitFor(pid)).status).toBe('success')
    const page = await user.get(started.location ?? '')
    const banner = elementWith(page.body, `class="live"`, 'div')
    expect(textOf(banner)).toMatch(new RegExp(`Run ${pid} ?: success · took \\d+\\.\\d s · Imported 1 products?`))
    expect(banner).toMatch(/<a data-field="refresh" href="[^"]+"\s*>Show its results<\/a>/)
  })
})
