import http from 'node:http'

// A GET of a feed file over a real connection that stops reading after its first chunk: what a
// slow client, or one still reading while an export commits, looks like to the server.

/** A GET on a real connection, paused after its first chunk until `finish`. */
export interface PausedDownload {
  status: number
  headers: http.IncomingHttpHeaders
  /** The bytes of the first chunk. */
  received: number
  etag: string
  finish(): Promise<Buffer>
  /** Closes the connection, if still open: a test that fails midway leaves none for the app's close to wait on. */
  destroy(): void
}

/** Starts the download; rejects unless it is answered 200. */
export function startDownload(port: number, url: string, headers: Record<string, string> = {}): Promise<PausedDownload> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path: url, headers, agent: false }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`GET ${url}: ${response.statusCode}`))
        response.resume()
        return
      }
      const chunks: Buffer[] = []
      const ended = new Promise<Buffer>((done, fail) => {
        response.on('end', () => done(Buffer.concat(chunks)))
        response.on('error', fail)
        response.on('aborted', () => fail(new Error(`GET ${url}: aborted`)))
      })
      // Keeps an early failure from being unhandled before finish() is awaited.
      ended.catch(() => {})
      let first = true
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk)
        if (!first) return
        first = false
        response.pause()
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          received: chunk.length,
          etag: String(response.headers.etag),
          finish: () => {
            response.resume()
            return ended
          },
          destroy: () => request.destroy(),
        })
      })
    })
    request.on('error', reject)
  })
}
