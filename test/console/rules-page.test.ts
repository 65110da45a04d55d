import { describe, expect, it } from 'vitest'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { addRule, importedSite, listRules, plainChannel } from '../rules/rule-fixture.js'
import { consoleUser, type ConsoleUser } from './console-session.js'
import { elementWith, textOf } from './held-site.js'

// The rules pages of the console (issue 32) through HTTP: a site's and a channel's rules listed in
// words, in order, with their state; added, edited, moved, enabled and disabled and deleted by form
// posts that carry the session's CSRF token (one without it, or with another, changes nothing);
// another account's site, channel or rule the 404 page.

const t = useTestApp(HIGH_LIMITS)

const ROWS = [
  { id: 'A1', title: 'Shirt', brand: 'Acme', availability: 'yes', price: '10' },
  { id: 'A2', title: 'Socks', brand: 'Bolt', availability: 'no', price: '4' },
]

interface Shop {
  f: ImportFixture
  channelId: string
  user: ConsoleUser
  csrf: string
  sitePath: string
  channelPath: string
}

async function shop(): Promise<Shop> {
  const f = await importFixture(t, { title: 'Ruled shop' })
  await importedSite(f, ROWS)
  const channelId = await plainChannel(f, 'csv', { name: 'CSV feed' })
  const user = await consoleUser(t.app, f.account.xAuthToken)
  const sitePath = `/console/sites/${f.site.id}/rules`
  return { f, channelId, user, csrf: await user.csrf(), sitePath, channelPath: `/console/sites/${f.site.id}/channels/${channelId}/rules` }
}

/** The rules of the page's list, as text, in order. */
function listed(body: string): string[] {
  return [...body.matchAll(/<li id="rule-\d+"[\s\S]*?<\/li>/g)].map((item) => textOf(item[0]).trim())
}

const MAP_FORM = {
  attribute: 'availability',
  description: 'Google spellings',
  enabled: '1',
  match: 'all',
  c0_attribute: '',
  c0_operator: 'equals',
  c0_value: '',
  then0_action: 'map',
  then0_entries: 'yes => in_stock\nno => out_of_stock',
  then0_default: '',
  op: 'save',
}

describe('the rules pages of a site and of a channel', () => {
  it('lists the rules in words, in order, with their state, and is linked from the site page and the diagnostics', async () => {
    const { f, channelId, user, sitePath, channelPath } = await shop()
    await addRule(f, { attribute: 'title', then: [{ action: 'concat', parts: [{ attribute: 'brand' }, { attribute: 'title' }] }] })
    await addRule(f, { attribute: 'price', enabled: false, description: 'cents', then: [{ action: 'round', decimals: 2 }] })
    await addRule(
      f,
      {
        attribute: 'availability',
        if: { all: [{ attribute: 'availability', operator: 'in', values: ['yes'] }] },
        then: [{ action: 'set', value: 'in_stock' }],
      },
      channelId,
    )

    const site = await user.get(sitePath)
    expect(site.status).toBe(200)
    expect(textOf(site.body)).toContain('Rules of Ruled shop')
    expect(listed(site.body)).toEqual([
      expect.stringMatching(/^1\. enabled Set title to brand \+ title Edit Move down Disable Delete$/),
      expect.stringMatching(/^2\. disabled Round price to 2 decimals cents Edit Move up Enable Delete$/),
    ])
    const channel = await user.get(channelPath)
    expect(listed(channel.body)).toEqual(['1. enabled If availability is one of "yes": set availability to "in_stock" Edit Disable Delete'])
    expect(channel.body).toContain(`href="${channelPath}/new"`)

    const sitePage = await user.get(`/console/sites/${f.site.id}`)
    expect(sitePage.body).toContain(`href="${sitePath}"`)
    expect(sitePage.body).toContain(`href="${channelPath}"`)
    const diagnostics = await user.get(`/console/sites/${f.site.id}/channels/${channelId}/diagnostics`)
    expect(diagnostics.body).toContain(`href="${channelPath}"`)
  })

  it('adds, edits, disables, enables, moves and deletes rules through form posts with the CSRF token', async () => {
    const { f, channelId, user, csrf, channelPath } = await shop()
    const form = await user.get(`${channelPath}/new`)
    expect(form.status).toBe(200)
    expect(form.body).toContain(`action="${channelPath}/new"`)
    expect(form.body).toMatch(/<datalist id="rule-columns">[\s\S]*<option value="availability">/)

    const created = await user.post(`${channelPath}/new`, { _csrf: csrf, ...MAP_FORM })
    expect(created.status, created.body).toBe(303)
    const [rule] = await listRules(f, channelId)
    expect(rule).toMatchObject({ attribute: 'availability', enabled: true, then: [{ action: 'map', entries: { yes: 'in_stock', no: 'out_of_stock' } }] })
    expect(created.location).toBe(`${channelPath}?done=saved&rule=${rule!.id}#rule-${rule!.id}`)
    const back = await user.get(created.location!.replace(/#.*/, ''))
    expect(textOf(elementWith(back.body, 'role="status"', 'p'))).toContain('Rule 1 was saved')

    const edited = await user.post(`${channelPath}/${rule!.id}`, { _csrf: csrf, ...MAP_FORM, then0_entries: 'yes => in_stock', then0_default: 'out_of_stock' })
    expect(edited.status, edited.body).toBe(303)
    expect((await listRules(f, channelId))[0]?.then).toEqual([{ action: 'map', entries: { yes: 'in_stock' }, default: 'out_of_stock', case_sensitive: false }])

    const disabled = await user.post(`${channelPath}/${rule!.id}/enabled`, { _csrf: csrf, enabled: 'false' })
    expect(disabled.status).toBe(303)
    expect((await listRules(f, channelId))[0]?.enabled).toBe(false)
    expect(listed((await user.get(channelPath)).body)[0]).toMatch(/^1\. disabled /)
    await user.post(`${channelPath}/${rule!.id}/enabled`, { _csrf: csrf, enabled: 'true' })
    expect((await listRules(f, channelId))[0]?.enabled).toBe(true)

    const second = await addRule(f, { attribute: 'title', then: [{ action: 'case', to: 'upper' }] }, channelId)
    const moved = await user.post(`${channelPath}/${second.id}/move`, { _csrf: csrf, direction: 'up' })
    expect(moved.location).toBe(`${channelPath}?done=moved&rule=${second.id}&direction=up`)
    expect((await listRules(f, channelId)).map((r) => r.id)).toEqual([second.id, rule!.id])
    // The moved rule's button keeps the focus, for the next press.
    const after = await user.get(moved.location!)
    expect(elementWith(after.body, `id="rule-${second.id}"`, 'li')).toMatch(/data-move="down"\s+autofocus/)
    await user.post(`${channelPath}/${second.id}/move`, { _csrf: csrf, direction: 'down' })
    expect((await listRules(f, channelId)).map((r) => r.id)).toEqual([rule!.id, second.id])

    const deleted = await user.post(`${channelPath}/${rule!.id}/delete`, { _csrf: csrf })
    expect(deleted.location).toBe(`${channelPath}?done=deleted`)
    expect((await listRules(f, channelId)).map((r) => r.id)).toEqual([second.id])
  })

  it('refuses a form without the CSRF token or with another, and a change by a personal access token, changing nothing', async () => {
    const { f, user, sitePath } = await shop()
    const rule = await addRule(f, { attribute: 'title', then: [{ action: 'trim' }] })
    const posts: [string, Record<string, string>][] = [
      [`${sitePath}/new`, MAP_FORM],
      [`${sitePath}/${rule.id}`, MAP_FORM],
      [`${sitePath}/${rule.id}/enabled`, { enabled: 'false' }],
      [`${sitePath}/${rule.id}/move`, { direction: 'down' }],
      [`${sitePath}/${rule.id}/delete`, {}],
    ]
    for (const [url, form] of posts) {
      expect((await user.post(url, form)).status, url).toBe(403)
      expect((await user.post(url, { ...form, _csrf: 'not-the-token' })).status, url).toBe(403)
    }
    const bearer = await consoleUser(t.app, f.account.token)
    const refused = await bearer.post(`${sitePath}/${rule.id}/delete`, { _csrf: await bearer.csrf() })
    expect(refused.status).toBe(403)
    expect(textOf(refused.body)).toContain('takes a sign-in with the platform credential')
    expect((await bearer.get(sitePath)).body).not.toContain('/delete"')
    expect(await listRules(f)).toEqual([expect.objectContaining({ id: rule.id, enabled: true, then: [{ action: 'trim' }] })])
  })

  it("answers another account's site, channel or rule with the 404 page", async () => {
    const { f, channelId, sitePath, channelPath } = await shop()
    const siteRule = await addRule(f, { attribute: 'title', then: [{ action: 'trim' }] })
    const channelRule = await addRule(f, { attribute: 'title', then: [{ action: 'trim' }] }, channelId)
    const other = await importFixture(t, { title: 'Other shop' })
    const theirChannel = await plainChannel(other, 'csv', { name: 'Theirs' })
    const stranger = await consoleUser(t.app, other.account.xAuthToken)
    const csrf = await stranger.csrf()
    const gets = [sitePath, channelPath, `${sitePath}/new`, `${sitePath}/${siteRule.id}`, `${channelPath}/${channelRule.id}`]
    for (const path of gets) {
      const refused = await stranger.get(path)
      expect(refused.status, path).toBe(404)
      expect(refused.body).toContain('Not found')
    }
    for (const path of [`${sitePath}/${siteRule.id}/delete`, `${channelPath}/${channelRule.id}/move`, `${sitePath}/new`]) {
      expect((await stranger.post(path, { _csrf: csrf, ...MAP_FORM, direction: 'up' })).status, path).toBe(404)
    }
    // Their own site with our channel, our site's rule under our channel, and a rule of no scope.
    const owner = await consoleUser(t.app, f.account.xAuthToken)
    expect((await stranger.get(`/console/sites/${other.site.id}/channels/${channelId}/rules`)).status).toBe(404)
    expect((await owner.get(`/console/sites/${f.site.id}/channels/${theirChannel}/rules`)).status).toBe(404)
    expect((await owner.get(`${channelPath}/${siteRule.id}`)).status).toBe(404)
    expect((await owner.get(`${sitePath}/999999`)).status).toBe(404)
    expect(await listRules(f)).toHaveLength(1)
    expect(await listRules(f, channelId)).toHaveLength(1)
  })
})
