import type { ConsoleSession } from '../accounts/console-sessions.js'
import type { RuleRow } from '../db/schema.js'
import type { RuleScopeOf } from '../rule-sets/rule-sets.js'
import { ruleSpecOf } from '../rules/rule-store.js'
import { ruleWords } from '../rules/rule-words.js'
import { html, type Html } from './html.js'
import { badge, csrfField } from './layout.js'
import { signedInWithPlatformCredential } from './pages.js'
import { ruleEditorPath, rulesPath } from './rule-links.js'

// A site's or a channel's rules in the console: in the order they run, each written out
// in words, with the buttons that edit, move, enable or disable and delete it. Every button is a
// form of its own that posts with the session's CSRF token, so it works by keyboard and without
// script; console.js adds Alt+↑ and Alt+↓ on a focused rule.

export interface RulesPageData {
  scope: RuleScopeOf
  rules: RuleRow[]
  session: ConsoleSession
  /** What the last change did, shown once above the list. */
  notice: string | undefined
  /** The rule a move just moved: its button keeps the focus. */
  moved: { id: string; direction: 'up' | 'down' } | undefined
}

/** The scope's name as the pages say it. */
export function scopeName({ site, channel }: RuleScopeOf): string {
  return channel ? channel.name : site.title
}

/** The breadcrumbs of a rules page and, with `last`, of a page below it. */
export function rulesTrail(scope: RuleScopeOf, last?: [string, string]): [string, string][] {
  const { site, channel } = scope
  const trail: [string, string][] = [
    ['Overview', '/console'],
    [site.title, `/console/sites/${site.id}`],
    [`Rules of ${scopeName(scope)}`, rulesPath(site.id, channel?.id)],
  ]
  return last ? [...trail, last] : trail
}

/** What the scope's rules work on, in a sentence. */
export function scopeSentence({ site, channel }: RuleScopeOf): Html {
  if (!channel) {
    return html`<p>
      Site rules turn the import stage into the <strong>intermediate stage</strong>, which every channel of ${site.title} reads: each rule writes one attribute,
      in the order below.
    </p>`
  }
  return html`<p>
    Channel rules run in ${channel.name}'s export after its filter and mapping (and after the site's rules), before its template's checks: what they write is
    what the feed carries. <a href="/console/sites/${site.id}/channels/${channel.id}/diagnostics">Diagnostics of ${channel.name}</a> ·
    <a href="${rulesPath(site.id)}">Rules of the site</a>
  </p>`
}

export function rulesPage(data: RulesPageData): Html {
  const { scope, rules, session } = data
  const { site, channel } = scope
  const writable = signedInWithPlatformCredential(session)
  const add = writable
    ? html`<p><a class="button" href="${ruleEditorPath(site.id, channel?.id)}">Add a rule</a></p>`
    : html`<p class="muted">Changing rules takes a sign-in with the platform credential (X-Auth-Token), as the rule routes of the platform interface do.</p>`
  const list =
    rules.length === 0
      ? html`<p class="muted">No rules yet: the ${channel ? "channel's rows go to its checks and feed" : 'import stage is read'} as they are.</p>`
      : html`<p class="muted" id="rules-keys">On a focused rule, Alt+↑ and Alt+↓ move it (the Move buttons do the same).</p>
          <ol class="rules" aria-describedby="rules-keys">
            ${rules.map((rule, i) => ruleItem(data, rule, i, writable))}
          </ol>`
  return html`${data.notice ? html`<p class="notice" role="status">${data.notice}</p>` : ''} ${scopeSentence(scope)}
    <section aria-labelledby="rules-heading">
      <h2 id="rules-heading">Rules, in the order they run</h2>
      ${add} ${list}
    </section>`
}

function ruleItem(data: RulesPageData, rule: RuleRow, index: number, writable: boolean): Html {
  const { site, channel } = data.scope
  const position = index + 1
  const words = ruleWords(ruleSpecOf(rule))
  const base = `${rulesPath(site.id, channel?.id)}/${rule.id}`
  const canMove = { up: index > 0, down: index < data.rules.length - 1 }
  // After a move, its button keeps the focus (the other one at the end of the list).
  const wanted = data.moved?.id === rule.id ? data.moved.direction : undefined
  const focused = wanted && (canMove[wanted] ? wanted : wanted === 'up' ? 'down' : 'up')
  const focus = (direction: 'up' | 'down') => focused === direction
  const button = (action: string, label: string, fields: Html | string, extra: Html | string = '') =>
    html`<form class="inline" method="post" action="${base}/${action}">
      ${csrfField(data.session)} ${fields}
      <button type="submit" class="secondary" ${extra}>${label}</button>
    </form>`
  const move = (direction: 'up' | 'down') =>
    button(
      'move',
      `Move ${direction}`,
      html`<input type="hidden" name="direction" value="${direction}" />`,
      html`aria-label="Move rule ${position} ${direction}" data-move="${direction}"${focus(direction) ? html` autofocus` : ''}`,
    )
  const forms = writable
    ? html`${canMove.up ? move('up') : ''} ${canMove.down ? move('down') : ''}
      ${button(
        'enabled',
        rule.enabled ? 'Disable' : 'Enable',
        html`<input type="hidden" name="enabled" value="${rule.enabled ? 'false' : 'true'}" />`,
        html`aria-label="${rule.enabled ? 'Disable' : 'Enable'} rule ${position}"`,
      )}
      ${button('delete', 'Delete', '', html`aria-label="Delete rule ${position}"`)}`
    : ''
  return html`<li id="rule-${rule.id}" class="rule" tabindex="0" data-rule="${rule.id}">
    <p class="rule-words"><strong>${position}.</strong> ${badge(rule.enabled ? 'enabled' : 'disabled')} ${words}</p>
    ${rule.description ? html`<p class="muted">${rule.description}</p>` : ''}
    <div class="rule-buttons">
      <a href="${ruleEditorPath(site.id, channel?.id, rule.id)}" aria-label="${writable ? 'Edit' : 'Open'} rule ${position}">${writable ? 'Edit' : 'Open'}</a>
      ${forms}
    </div>
  </li>`
}
