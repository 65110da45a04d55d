import { createHash, type Hash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'

declare module 'fastify' {
  interface FastifyRequest {
    /** SHA-256 of a JSON body as it arrived (hex); null when the request had none. */
    bodyDigest: string | null
  }
}

const EMPTY_DIGEST = createHash('sha256').digest('hex')

/** Notes the digest of a body read whole (the JSON bodies of both interfaces). */
export function noteBodyDigest(request: FastifyRequest, body: Buffer): void {
  request.bodyDigest = createHash('sha256').update(body).digest('hex')
}

/** The digest of the request's JSON body: the empty body's when it had none. */
export function bodyDigestOf(request: FastifyRequest): string {
  return request.bodyDigest ?? EMPTY_DIGEST
}

/** Passes a streamed body's chunks on, hashing them on the way (a product upload's, as it is received). */
export async function* digestingChunks(chunks: AsyncIterable<Buffer>, hash: Hash): AsyncGenerator<Buffer> {
  for await (const chunk of chunks) {
    hash.update(chunk)
    yield chunk
  }
}
