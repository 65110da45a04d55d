import type { OperationDocs } from '../http/openapi.js'
import { channelDocs } from './openapi-docs-channels.js'
import { templateDocs } from './openapi-docs-templates.js'
import { runDocs } from './openapi-docs-runs.js'
import { siteDocs } from './openapi-docs-sites.js'
import { ruleDocs } from './openapi-docs-rules.js'
import { activityDocs } from './openapi-docs-activity.js'
import { destinationDocs } from './openapi-docs-destinations.js'
import { sourceDocs } from './openapi-docs-sources.js'

export { platformErrorExamples, platformTags } from './openapi-examples.js'

/** The OpenAPI docs of every platform operation, by operationId (src/http/openapi.ts puts them in). */
export const platformOperations: Record<string, OperationDocs> = {
  ...siteDocs,
  ...runDocs,
  ...channelDocs,
  ...templateDocs,
  ...ruleDocs,
  ...activityDocs,
  ...destinationDocs,
  ...sourceDocs,
}
