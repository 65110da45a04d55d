import { describe, expect, it } from 'vitest'
import { createChannel, readChannel } from '../helpers/clients.js'
import { importFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { goodProduct } from '../templates/template-fixture.js'
import { returnPath } from '../../src/console-web/channel-release-routes.js'
import { consoleUser } from './console-session.js'
import { elementWith, heldSite, servedRows, textOf } from './held-site.js'

// A channel held by a safety stop in the console (issue 31), through HTTP: its banner with the
// figures and a Release form on the overview, the site page and the diagnostics page; the run as
// success with warnings; the release with the session's CSRF token and its refusals (no token,
// another account, a personal access token, nothing held); the operator's list across accounts.

const OPERATOR = 'operator-token-for-the-held-channel-tests'
const t = useTestApp({ ...HIGH_LIMITS, CONSOLE_OPERATOR_TOKEN: OPERATOR })

async function heldShop(title = 'Held shop') {
  const f = await importFixture(t, { title })
  const site = await heldSite(f)
  const user = await consoleUser(t.app, f.account.xAuthToken)
  const release = `/console/sites/${f.site.id}/channels/${site.channel.id}/release`
  return { f, ...site, user, release }
}

describe('a held channel in the console', () => {
  it('is a banner with the figures and a Release form on the overview, the site and the diagnostics page; its run: success with warnings', async () => {
    const { f, channel, held, user, release } = await heldShop()
    const csrf = await user.csrf()
    const diagnostics = `/console/sites/${f.site.id}/channels/${channel.id}/diagnostics`
    for (const [url, back] of [
      ['/console', '/console'],
      [`/console/sites/${f.site.id}`, `/console/sites/${f.site.id}`],
      [diagnostics, diagnostics],
    ] as const) {
      const shown = await user.get(url)
      expect(shown.status, url).toBe(200)
      const banner = elementWith(shown.body, `data-held-channel="${channel.id}"`)
      expect(textOf(banner), url).toContain('CSV all')
      expect(textOf(banner)).toContain('50 products now vs 200 delivered: a drop of 75 % (stop at 50 %)')
      expect(textOf(banner)).toContain('its file would hold 50 products instead of the 200 delivered')
      expect(banner).toContain(`href="${diagnostics}"`)
      expect(banner).toContain(`<form class="inline" method="post" action="${release}">`)
      expect(banner).toContain(`name="_csrf" value="${csrf}"`)
      expect(banner).toContain(`name="pid" value="${held.pid}"`)
      expect(banner).toContain(`name="return" value="${back}"`)
    }
    const overview = await user.get('/console')
    expect(elementWith(overview.body, `id="channel-state-${channel.id}"`, 'tr')).toContain('badge-held')
    expect(overview.body).toContain('<span class="badge badge-success_with_warnings">success with warnings</span>')

    const site = await user.get(`/console/sites/${f.site.id}`)
    const runs = elementWith(site.body, 'aria-labelledby="runs-heading"')
    const newest = /<tbody>\s*<tr>([\s\S]*?)<\/tr>/.exec(runs)?.[1] ?? ''
    expect(newest).toContain(held.pid.slice(0, 8))
    expect(newest).toContain('<span class="badge badge-success_with_warnings">success with warnings</span>')
    // The run before it exported everything: plain success.
    const first = [...runs.matchAll(/<tr>([\s\S]*?)<\/tr>/g)][2]?.[1] ?? ''
    expect(first).toContain('<span class="badge badge-success">success</span>')
    const channels = textOf(elementWith(site.body, 'aria-labelledby="channels-heading"'))
    expect(channels).toMatch(/CSV all .* held/)
    expect(channels).toContain('Last export')
    expect(channels).toContain('200 products')
    expect(channels).toMatch(/Held export [\d-]+ [\d:]+ UTC\s*: 50 products \(150 deleted, 0 left out\), not published/)

    const status = await user.get(`/console/sites/${f.site.id}/runs/${held.pid}/status`)
    expect(JSON.parse(status.body)).toMatchObject({ pid: held.pid, status: 'success with warnings', ended: true })
  }, 60_000)

  it("is released with the session's CSRF token: the feed then serves 50 rows, the banner is gone and the channel published", async () => {
    const { f, channel, held, user, release } = await heldShop()
    const refused = await user.post(release, { pid: held.pid, return: '/console' })
    expect(refused.status).toBe(403)
    expect(textOf(refused.body)).toContain('The form has expired or did not come from this console')
    expect((await readChannel(f, channel.id)).export_status).toBe('held')
    expect(await servedRows(t, f, channel.id)).toBe(200)

    const csrf = await user.csrf()
    const released = await user.post(release, { _csrf: csrf, pid: held.pid, return: '/console' })
    expect(released.status, released.body).toBe(303)
    expect(released.location).toBe(`/console?released=${channel.id}`)
    expect(await servedRows(t, f, channel.id)).toBe(50)
    expect(await readChannel(f, channel.id)).toMatchObject({ export_status: 'published', hold: null })
    const overview = await user.get(released.location!)
    expect(textOf(overview.body)).toContain(`The held export of CSV all (#${channel.id}) was released`)
    expect(overview.body).not.toContain(`data-held-channel="${channel.id}"`)
    expect(elementWith(overview.body, `id="channel-state-${channel.id}"`, 'tr')).toContain('badge-published')

    // Nothing held any more: the reason, on a page of the console, not an error of the server.
    const again = await user.post(release, { _csrf: csrf, pid: held.pid, return: `/console/sites/${f.site.id}` })
    expect(again.status).toBe(409)
    expect(again.body).toMatch(/^<!doctype html>/)
    expect(textOf(again.body)).toContain(`Channel ${channel.id} has no held export: nothing to release`)
    expect(again.body).toContain(`<a href="/console/sites/${f.site.id}">Back</a>`)
  }, 60_000)

  it("refuses another account's channel (404) and a personal access token's session (403), and comes back only to pages of the site", async () => {
    const { f, channel, held, release } = await heldShop()
    const other = await importFixture(t, { title: 'Somebody else' })
    const stranger = await consoleUser(t.app, other.account.xAuthToken)
    const theirCsrf = await stranger.csrf()
    for (const url of [release, `/console/sites/${other.site.id}/channels/${channel.id}/release`]) {
      const refused = await stranger.post(url, { _csrf: theirCsrf, pid: held.pid })
      expect(refused.status, url).toBe(404)
      expect(refused.body).not.toContain('CSV all')
    }
    const bearer = await consoleUser(t.app, f.account.token)
    const overview = await bearer.get('/console')
    expect(elementWith(overview.body, `data-held-channel="${channel.id}"`)).not.toContain('<form')
    expect(textOf(overview.body)).toContain('Releasing takes a sign-in with the platform credential (X-Auth-Token)')
    const tokenRefused = await bearer.post(release, { _csrf: await bearer.csrf(), pid: held.pid })
    expect(tokenRefused.status).toBe(403)
    expect(textOf(tokenRefused.body)).toContain('Releasing a held export takes a sign-in with the platform credential (X-Auth-Token)')
    expect((await readChannel(f, channel.id)).export_status).toBe('held')

    const user = await consoleUser(t.app, f.account.xAuthToken)
    const released = await user.post(release, { _csrf: await user.csrf(), pid: held.pid, return: '//evil.example/console' })
    expect(released.status).toBe(303)
    expect(released.location).toBe(`/console/sites/${f.site.id}?released=${channel.id}`)
    const site = `/console/sites/${f.site.id}`
    expect(returnPath(`${site}/channels/${channel.id}/diagnostics`, f.site.id)).toBe(`${site}/channels/${channel.id}/diagnostics`)
    for (const hostile of ['https://evil.example/', '/console/sites/999999', `${site}/../../operator`, `${site}/x?y=1`, `${site}//evil.example`, 7]) {
      expect(returnPath(hostile, f.site.id), String(hostile)).toBe(site)
    }
  }, 60_000)

  it('is listed on the operator page across accounts, beside a channel below its readiness threshold', async () => {
    const { f, channel } = await heldShop('Operator held shop')
    const low = await importFixture(t, { title: 'Low readiness shop' })
    const stream = await low.createStream()
    await low.attach(stream)
    const products = [goodProduct('ok', { price: '10.00 EUR' }), goodProduct('bad-1', { price: 'ten' }), goodProduct('bad-2', { price: 'ten' })]
    expect((await low.upload(stream, products)).statusCode).toBe(202)
    const google = await createChannel(low, { name: 'Google low', export_name: 'google_shopping', format: 'xml', currency: 'EUR', readiness_threshold: 0.9 })
    expect((await low.run('all')).status).toBe('success')
    // Not held (3 products are below safety_min_products), but two were left out: success with warnings.
    const owner = await consoleUser(t.app, low.account.xAuthToken)
    const lastRun = elementWith((await owner.get('/console')).body, `<a href="/console/sites/${low.site.id}">`, 'tr')
    expect(lastRun).toContain('<span class="badge badge-success_with_warnings">success with warnings</span>')

    const operator = await consoleUser(t.app, OPERATOR)
    const page = await operator.get('/console/operator')
    expect(page.status).toBe(200)
    const heldRow = textOf(elementWith(page.body, `id="attention-${channel.id}"`, 'tr'))
    expect(heldRow).toContain(`Operator held shop #${f.site.id}`)
    expect(heldRow).toContain('held drop: 50 products now vs 200 delivered')
    const lowRow = textOf(elementWith(page.body, `id="attention-${google.id}"`, 'tr'))
    expect(lowRow).toContain('Google low')
    expect(lowRow).toMatch(/33\.3 % 90 % below checked [\d-]+/)
    expect(page.body.indexOf(`id="attention-${channel.id}"`)).toBeLessThan(page.body.indexOf(`id="attention-${google.id}"`))
  }, 60_000)
})
