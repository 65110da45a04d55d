import type { ChannelSummary } from '../rule-sets/channel-preview.js'
import type { PreviewChecks, PreviewProduct } from '../rule-sets/preview-views.js'
import type { RulePreview } from '../rule-sets/rule-preview.js'
import { percent } from './diagnostics-page-views.js'
import { html, type Html } from './html.js'
import { badge, dataTable } from './layout.js'

// The rule editor's preview: what the scope's rules, with the rule of the form in its
// place, would do to sample products and to the whole stage, before anything is saved.

/** A preview's answer, or the message of what it refused, with the drafts it ran. */
export interface PreviewPanel {
  result: RulePreview | undefined
  problem: string | undefined
  /** The id the edited rule had among the drafts. */
  draftId: string
  attribute: string | null
  /** The drafts in order, in words. */
  rules: { id: string; words: string; enabled: boolean }[]
}

/** Which products the preview shows: one by id, those a filter keeps, or only those the rules change. */
export interface PreviewSample {
  id: string
  filter: string
  changedOnly: boolean
}

/** The most products a preview of the editor shows. */
export const PREVIEW_PRODUCTS = 10

export function previewSection(sample: PreviewSample, panel: PreviewPanel | undefined, op: 'preview' | 'preview_json' = 'preview'): Html {
  return html`<section aria-labelledby="preview-heading" id="preview">
    <h2 id="preview-heading">Preview</h2>
    <p class="muted">Runs the rules with this one as the form has it, on up to ${PREVIEW_PRODUCTS} products and over the whole stage. Nothing is saved.</p>
    <div class="filters">
      <div><label for="preview-id">Product id</label><input id="preview-id" name="preview_id" value="${sample.id}" /></div>
      <div>
        <label for="preview-filter">Filter</label
        ><input id="preview-filter" name="preview_filter" value="${sample.filter}" size="40" placeholder="brand = 'Acme'" />
      </div>
      <div class="check">
        <input type="checkbox" id="preview-changed" name="preview_changed" value="1" ${sample.changedOnly ? html` checked` : ''} /><label for="preview-changed"
          >Only products the rules change</label
        >
      </div>
      <div><button type="submit" name="op" value="${op}">Preview</button></div>
    </div>
    ${panel ? results(panel) : ''}
  </section>`
}

function results(panel: PreviewPanel): Html {
  if (panel.problem !== undefined || !panel.result) return html`<p class="error" role="alert">${panel.problem ?? ''}</p>`
  const { result } = panel
  return html`<div role="status" aria-live="polite" data-preview>${summary(panel)} ${products(panel, result.products, result.scope === 'channel')}</div>`
}

function summary(panel: PreviewPanel): Html {
  const found = panel.result?.summary
  if (!found) return html``
  const where = panel.result?.scope === 'channel' ? "the channel's products (through its filter)" : 'the import stage'
  const counts = html`<p>
    Over ${where}: <strong>${found.products}</strong> products; the rules change <strong>${found.changed}</strong> and leave out
    <strong>${found.excluded}</strong>.
  </p>`
  const matched = new Map(found.rules.map((rule) => [rule.rule_id, rule.matched]))
  const rows = panel.rules.map(
    (rule, i) =>
      html`<tr ${rule.id === panel.draftId ? html`class="current"` : ''}>
        <td class="num">${i + 1}</td>
        <td>${rule.words}${rule.id === panel.draftId ? html` <strong>(this rule)</strong>` : ''}</td>
        <td class="num">${rule.enabled ? (matched.get(rule.id) ?? 0) : html`<span class="muted">disabled</span>`}</td>
      </tr>`,
  )
  const readiness = 'readiness' in found ? readinessLine(found) : ''
  return html`${counts} ${readiness}
    <h3 id="preview-matches">Products each rule matches</h3>
    ${dataTable(['#Position', 'Rule', '#Matches'], rows, { describedBy: 'preview-matches' })}`
}

function readinessLine(found: ChannelSummary): Html {
  const share = (value: number | null) => (value === null ? '—' : percent(value))
  const saved = found.saved
  return html`<p data-readiness>
    Readiness with this rule: <strong>${share(found.readiness)}</strong> (${found.exported} exported, ${found.left_out} left out of ${found.checked} checked)
    ${saved ? html`· with the saved rules: <strong>${share(saved.readiness)}</strong> (${saved.exported} exported, ${saved.left_out} left out)` : ''}
  </p>`
}

function value(text: string | undefined): Html {
  return text === undefined || text === '' ? html`<span class="muted">(empty)</span>` : html`<code>${text}</code>`
}

/** The attributes a rule changed besides `attribute`: name, before, after. */
function otherChanges(product: PreviewProduct, attribute: string | null): Html {
  const after = product.after
  if (!after) return html``
  const names = [...new Set([...Object.keys(product.before), ...Object.keys(after)])]
  const changed = names.filter((name) => name !== attribute && (product.before[name] ?? '') !== (after[name] ?? ''))
  return html`${changed.slice(0, 10).map((name) => html`<div>${name}: ${value(product.before[name])} → ${value(after[name])}</div>`)}
  ${changed.length > 10 ? html`<div class="muted">and ${changed.length - 10} more</div>` : ''}`
}

function checks(found: PreviewChecks | null | undefined): Html {
  if (!found) return html`—`
  const codes = found.issues.map((issue) => html`<div><code>${issue.code}</code> ${badge(issue.severity)}</div>`)
  return html`${badge(found.in_feed ? 'in the feed' : 'left out')} ${codes}`
}

function products(panel: PreviewPanel, list: PreviewProduct[], channel: boolean): Html {
  const attribute = panel.attribute
  if (list.length === 0) return html`<p class="muted">No products to show: none has the product id, passes the filter or is changed by the rules.</p>`
  const rows = list.map((product) => {
    const step = product.steps.find((entry) => entry.rule_id === panel.draftId)
    const ran = step ? (step.excluded ? badge('excluded') : step.matched ? '“then” ran' : '“otherwise” ran') : html`<span class="muted">not run</span>`
    const after = product.excluded ? badge('excluded') : value(attribute === null ? undefined : product.after?.[attribute])
    return html`<tr data-product="${product.id}">
      <td><code>${product.id}</code></td>
      ${
        attribute === null
          ? ''
          : html`<td>${value(product.before[attribute])}</td>
              <td>${after}</td>`
      }
      <td>${product.excluded ? '' : otherChanges(product, attribute)}</td>
      <td>${ran}</td>
      ${
        channel
          ? html`<td>${checks(product.checks?.before)}</td>
              <td>${product.excluded ? '—' : checks(product.checks?.after)}</td>`
          : ''
      }
    </tr>`
  })
  const names = [
    'Product',
    ...(attribute === null ? [] : [`${attribute} before`, `${attribute} after`]),
    'Other changes',
    'This rule',
    ...(channel ? ['Checks before', 'Checks after'] : []),
  ]
  return html`<h3 id="preview-products">Sample products: before → after</h3>
    ${dataTable(names, rows, { describedBy: 'preview-products' })}`
}
