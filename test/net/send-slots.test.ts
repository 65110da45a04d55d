import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { SendSlots } from '../../src/net/send-slots.js'

// The slot accounting the push and webhook workers share, on a fake clock.
describe('send slots', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('give a slot back when its send has waited a second, and count it as open until it ends', () => {
    const onFree = vi.fn()
    const slots = new SendSlots({ concurrency: 2, maxOpen: 8, onFree })
    const first = slots.take()
    const second = slots.take()
    expect(slots.free).toBe(0)
    expect(() => slots.take()).toThrow(/no free send slot/)
    // Claimed but not sent yet (a file being prepared): it keeps its slot.
    slots.sending(first)
    vi.advanceTimersByTime(999)
    expect(slots.free).toBe(0)
    vi.advanceTimersByTime(1)
    expect(onFree).toHaveBeenCalledTimes(1)
    expect(slots).toMatchObject({ free: 1, open: 2 })
    slots.release(first)
    expect(slots).toMatchObject({ free: 1, open: 1 })
    slots.release(second)
    expect(slots).toMatchObject({ free: 2, open: 0 })
    vi.advanceTimersByTime(5000)
    expect(onFree).toHaveBeenCalledTimes(1)
  })

  it('end the slow send that waited longest when a new one would open one too many', () => {
    const slots = new SendSlots({ concurrency: 1, maxOpen: 2, onFree: () => {} })
    const oldest = slots.take()
    slots.sending(oldest)
    vi.advanceTimersByTime(1500)
    const next = slots.take()
    slots.sending(next)
    vi.advanceTimersByTime(1000)
    expect(slots).toMatchObject({ free: 1, open: 2 })
    const third = slots.take()
    expect(oldest.signal.aborted).toBe(true)
    expect(oldest.cutReason).toBe('no response within 2.5 s (ended early: 2 requests were open, and this one had waited longest)')
    expect(next.signal.aborted).toBe(false)
    expect(third.signal.aborted).toBe(false)
    expect(slots.open).toBe(2)
    // Handing the ended one back changes nothing more.
    slots.release(oldest)
    expect(slots).toMatchObject({ free: 0, open: 2 })
  })

  it('abort every open send, slow or not, without a reason when the worker stops', () => {
    const slots = new SendSlots({ concurrency: 2, maxOpen: 4, onFree: () => {} })
    const slow = slots.take()
    slots.sending(slow)
    vi.advanceTimersByTime(1000)
    const starting = slots.take()
    slots.abortAll()
    for (const slot of [slow, starting]) expect(slot).toMatchObject({ cutReason: undefined, signal: { aborted: true } })
  })

  it('never keep fewer open than the slots', () => {
    const slots = new SendSlots({ concurrency: 3, maxOpen: 1, onFree: () => {} })
    const taken = [slots.take(), slots.take(), slots.take()]
    expect(taken.every((slot) => !slot.signal.aborted)).toBe(true)
    expect(slots).toMatchObject({ free: 0, open: 3 })
  })
})
