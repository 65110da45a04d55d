import type { FastifyReply, FastifyRequest } from 'fastify'

// How much of a body that an answer did not need is read and dropped before the connection is
// closed instead: a client that sends 10 MB to a refusing path finishes sending and reads its
// answer, while nobody can keep a socket by sending forever.
export const UNREAD_BODY_MAX_BYTES = 256 * 1024 * 1024
export const UNREAD_BODY_MAX_MS = 30_000
const UNREAD_BODY_IDLE_MS = 5_000

/**
 * An answer sent before its request's body was read to the end (401, 413, 415, 423, 429, a 503 at
 * the deadline): the rest of the body is read and dropped. Closed at once instead, the connection
 * would be reset while the client is still sending, and most clients (Node's fetch, curl on a slow
 * link) then report a broken connection and never show the answer. Read to its end, the connection
 * stays usable for the client's next request. Runs as an onSend hook for every route.
 */
export async function drainUnreadBody(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const raw = request.raw
  if (raw.complete || raw.destroyed || raw.readableEnded) return
  // Fastify asks for the close after a refused body; it would reset a client still sending.
  reply.removeHeader('connection')
  dropRest(raw)
}

function dropRest(raw: FastifyRequest['raw']): void {
  const socket = raw.socket
  let bytes = 0
  const cut = () => {
    stop()
    socket.destroy()
  }
  const idle = setTimeout(cut, UNREAD_BODY_IDLE_MS)
  const overall = setTimeout(cut, UNREAD_BODY_MAX_MS)
  idle.unref()
  overall.unref()
  const onData = (chunk: Buffer) => {
    bytes += chunk.length
    if (bytes > UNREAD_BODY_MAX_BYTES) cut()
    else idle.refresh()
  }
  const stop = () => {
    clearTimeout(idle)
    clearTimeout(overall)
    raw.off('data', onData)
    raw.off('end', stop)
    raw.off('close', stop)
  }
  raw.on('data', onData)
  raw.once('end', stop)
  raw.once('close', stop)
  // Whatever read it before (an upload's decoder) has let go of it; nothing else reads it now.
  raw.unpipe()
  raw.resume()
}
