// Deliveries became due in this process (an event committed, a retry was asked for): the delivery
// workers of this process look at once instead of at their next poll. A hint only: the poll finds
// every due delivery anyway, and another process's worker finds this one's at its next poll.

const listeners = new Set<() => void>()

/** Calls `listener` whenever deliveries become due here; returns the unsubscribe. */
export function onDeliveriesDue(listener: () => void): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

export function deliveriesDue(): void {
  for (const listener of listeners) listener()
}
