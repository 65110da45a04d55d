import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

// A real HTTP server on a loopback port serving catalog files to fetched sources (issue 34): each
// path answers as its route says, and every request is recorded with its headers.

export type FeedRoute = (request: IncomingMessage, response: ServerResponse) => void

export interface FeedServer {
  /** http://127.0.0.1:PORT */
  origin: string
  /** Sets what a path answers. */
  route(path: string, handler: FeedRoute): void
  /** Serves `body` at `path`, with an ETag when asked, answering 304 to a matching If-None-Match. */
  file(path: string, body: string | Buffer, options?: { etag?: string; contentType?: string }): void
  requests: { path: string; headers: IncomingMessage['headers'] }[]
  close(): Promise<void>
}

export async function startFeedServer(): Promise<FeedServer> {
  const routes = new Map<string, FeedRoute>()
  const requests: FeedServer['requests'] = []
  const server = http.createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname
    requests.push({ path, headers: request.headers })
    const handler = routes.get(path)
    if (!handler) {
      response.writeHead(404).end('not found')
      return
    }
    handler(request, response)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    route: (path, handler) => routes.set(path, handler),
    file: (path, body, options = {}) =>
      routes.set(path, (request, response) => {
        if (options.etag && request.headers['if-none-match'] === options.etag) {
          response.writeHead(304).end()
          return
        }
        response.writeHead(200, { 'content-type': options.contentType ?? 'text/plain', ...(options.etag && { etag: options.etag }) }).end(body)
      }),
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
