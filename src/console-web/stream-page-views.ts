import { counted } from '../input/text-input.js'
import type { Batch, BatchStage, Stream } from '../db/schema.js'
import { html, type Html } from './html.js'
import { badge, dataTable, when } from './layout.js'

/** The stream page's body: its status, then its batches, newest first, with what each stage refused and why. */
export function streamPageBody(view: { stream: Stream; batches: Batch[]; total: number; offset: number; perPage: number }): Html {
  const { stream, batches, total, offset, perPage } = view
  const pager = html`<div class="pager">
    ${offset > 0 ? html`<a href="?offset=${Math.max(0, offset - perPage)}">Newer batches</a>` : ''}
    ${offset + batches.length < total ? html`<a href="?offset=${offset + perPage}">Older batches</a>` : ''}
  </div>`
  return html`<p>
      ${badge(stream.status)}
      <span class="muted">${stream.type} stream #${stream.id} · ${stream.content_type ?? 'no upload yet'} · ${counted(total, 'batch', 'batches')}</span>
    </p>
    <section aria-labelledby="batches-heading">
      <h2 id="batches-heading">Batches</h2>
      ${batches.length === 0 ? html`<p class="muted">No batches yet.</p>` : batches.map(batchView)} ${pager}
    </section>`
}

function batchView(batch: Batch): Html {
  const stages = [stageRow('upload', batch.upload_stage), stageRow('processing', batch.processing_stage)]
  return html`<article class="batch" aria-labelledby="batch-${batch.id}">
    <h3 id="batch-${batch.id}">${badge(batch.status)} <code>${batch.id}</code> <span class="muted">${batch.kind} · ${when(batch.created_at)}</span></h3>
    ${dataTable(['Stage', 'Status', '#Accepted', '#Refused', 'Completed'], stages)}
    ${stageErrors('upload', batch.upload_stage)}${stageErrors('processing', batch.processing_stage)}
  </article>`
}

function stageRow(name: string, stage: BatchStage | null): Html {
  if (!stage)
    return html`<tr>
      <td>${name}</td>
      <td colspan="4" class="muted">not imported yet</td>
    </tr>`
  return html`<tr>
    <td>${name}</td>
    <td>${badge(stage.status)}</td>
    <td class="num">${stage.successCount}</td>
    <td class="num">${stage.errorCount}</td>
    <td>${when(stage.completedAt ? new Date(stage.completedAt) : null)}</td>
  </tr>`
}

function stageErrors(name: string, stage: BatchStage | null): Html {
  if (!stage || stage.errors.length === 0) return html``
  const items = stage.errors.map(
    (error) =>
      html`<li>
        <strong>${error.message}</strong> × ${error.occurrences}, first on line ${error.example.lineNumber}:
        <pre>${error.example.value}</pre>
      </li>`,
  )
  return html`<p>Refused at ${name}:</p>
    <ul>
      ${items}
    </ul>`
}
