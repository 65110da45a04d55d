import type { OperationDocs } from '../http/openapi.js'

// The OpenAPI docs of a channel's file server destinations (by operationId).

export const destinationDocs: Record<string, OperationDocs> = {
  testDestination: {
    summary: "Test a channel's SFTP or FTPS destination",
    description:
      'Connects as a delivery does (the outbound guard, the host key or the TLS certificate, the login), writes a small file ' +
      '(under a temporary name and renamed, when the destination does so) into its directory and removes it. Answers what ' +
      'happened: `ok`, where it wrote, how long it took, and why it failed. Credentials never appear in the answer.',
    responses: {
      200: {
        fine: {
          summary: 'It works',
          value: {
            success: true,
            Tests: [{ destination_id: '7', ok: true, remote_path: 'upload/.catalog-platform-test-m1.txt', duration_ms: 412, error: null }],
          },
        },
        key: {
          summary: 'The host key differs',
          value: {
            success: true,
            Tests: [
              {
                destination_id: '7',
                ok: false,
                remote_path: null,
                duration_ms: 98,
                error: "the server's host key is SHA256:…, not the SHA256:… the destination expects; nothing was sent",
              },
            ],
          },
        },
      },
    },
  },
  listDeliveryAttempts: {
    summary: "List a channel's delivery attempts",
    description:
      'Every attempt to send an exported file to an http, SFTP or FTPS destination, newest first: the file, where it went, ' +
      'when, how long it took, the bytes sent and the remote path, and whether it was delivered, will be retried or failed. ' +
      'Paged by `limit` and `offset`.',
  },
}
