import type { FastifyRequest } from 'fastify'

/** `YYYY-MM-DD HH:MM:SS` in UTC, the platform's timestamp shape. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ')
}

/** Base URL for absolute links: PUBLIC_URL when configured, else what the client called. */
export function baseUrl(request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '')
  return `${request.protocol}://${request.host}`
}

/** Links as clients expect them: an array of one-key objects. */
export function links(base: string, relations: Record<string, string>): Record<string, string>[] {
  return Object.entries(relations).map(([name, path]) => ({ [name]: `${base}${path}` }))
}
