import { describe, expect, it } from 'vitest'
import { RequestTimeoutError } from '../../src/errors.js'
import { ClientClosedError } from '../../src/errors.js'
import { UploadDeadline } from '../../src/streams/upload-deadline.js'

// The answer of a write at its deadline and its commit decide together: a 503 means nothing was
// committed, and work past its commit point is answered with its own outcome. The order of events
// is set by hand here; HTTP cannot place an abort between a check and a COMMIT.

/** A step the test lets go of by hand. */
function gate(): { passed: Promise<void>; open: () => void } {
  let open = () => {}
  const passed = new Promise<void>((resolve) => {
    open = resolve
  })
  return { passed, open }
}

function deadline(): { controller: AbortController; deadline: UploadDeadline } {
  const controller = new AbortController()
  // A long limit: no test here reaches it by the clock.
  return { controller, deadline: UploadDeadline.of(controller.signal, 60_000, 0) }
}

describe('UploadDeadline', () => {
  it('answers 503 when the signal aborts while the work waits; the work then cannot pass its commit point', async () => {
    const { controller, deadline: d } = deadline()
    const waiting = gate()
    const work = (async () => {
      await waiting.passed
      d.commitPoint()
      return 'committed'
    })()
    work.catch(() => {})
    const answer = d.run(() => work)
    controller.abort(new RequestTimeoutError(300))
    await expect(answer).rejects.toBeInstanceOf(RequestTimeoutError)
    waiting.open()
    await expect(work).rejects.toBeInstanceOf(RequestTimeoutError)
  })

  it('answers with the outcome of work past its commit point, even when the signal aborts during the commit', async () => {
    const { controller, deadline: d } = deadline()
    const committing = gate()
    const answer = d.run(async () => {
      d.commitPoint()
      await committing.passed
      return 'committed'
    })
    controller.abort(new RequestTimeoutError(300))
    committing.open()
    await expect(answer).resolves.toBe('committed')
  })

  it('stops the work of a client that went away with ClientClosedError', async () => {
    const { controller, deadline: d } = deadline()
    controller.abort(new ClientClosedError())
    await expect(d.run(async () => 'never')).rejects.toBeInstanceOf(ClientClosedError)
    expect(() => d.commitPoint()).toThrow(ClientClosedError)
  })

  it('reports Postgres giving up on a lock (lock_timeout) as the request timeout', async () => {
    const { deadline: d } = deadline()
    const lockTimeout = Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' })
    await expect(d.run(() => Promise.reject(lockTimeout))).rejects.toBeInstanceOf(RequestTimeoutError)
  })

  it('leaves a statement cancelled before the deadline (by an operator) as the database error', async () => {
    const { deadline: d } = deadline()
    const cancelled = Object.assign(new Error('canceling statement due to user request'), { code: '57014' })
    await expect(d.run(() => Promise.reject(cancelled))).rejects.toBe(cancelled)
  })
})
