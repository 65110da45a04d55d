import { Type, type Static } from '@sinclair/typebox'

// The path, query and form schemas of the console's routes. A path id stays text: the domain functions
// answer a malformed one with a 404, as they answer another account's. A query value is optional text
// that the pages read leniently (queryInt, queryText): a bad offset is the first page, not a 400.
// Keys a schema does not name are let through, unread.

const text = () => Type.Optional(Type.String())

export const SiteParams = Type.Object({ siteId: Type.String() })
export const ChannelParams = Type.Object({ siteId: Type.String(), channelId: Type.String() })
export const DestinationParams = Type.Object({ siteId: Type.String(), channelId: Type.String(), destinationId: Type.String() })
export const ProductParams = Type.Object({ siteId: Type.String(), productId: Type.String() })
export const RunParams = Type.Object({ siteId: Type.String(), pid: Type.String() })
export const StreamParams = Type.Object({ streamId: Type.String() })
export const WebhookDeliveryParams = Type.Object({ webhookId: Type.String(), deliveryId: Type.String() })
/** The rules of a site, or of one of its channels (RULE_SCOPE_PREFIXES). */
export const RuleScopeParams = Type.Object({ siteId: Type.String(), channelId: Type.Optional(Type.String()) })
/** One rule of a site or of one of its channels. */
export const RuleItemParams = Type.Object({ siteId: Type.String(), channelId: Type.Optional(Type.String()), ruleId: Type.String() })

/** Where to go after signing in; repeated, the first (firstText reads either shape). */
export const SignInQuery = Type.Object({ next: Type.Optional(Type.Unknown()) })
/** The channel a release came back from. */
export const ReleasedQuery = Type.Object({ released: text() })
export const OffsetQuery = Type.Object({ offset: text() })
export const OperatorQuery = Type.Object({ account: text(), changed: text() })
export const SitePageQuery = Type.Object({ runs_offset: text(), pid: text(), type: text(), classification: text(), released: text(), run: text() })
export const ProductBrowserQuery = Type.Object({ stage: text(), channel: text(), fields: text(), filter: text(), offset: text() })
/** A product whose id no path segment carries (productHref). */
export const ProductIdQuery = Type.Object({ id: text() })
export const DiagnosticsPageQuery = Type.Object({ severity: text(), code: text(), attribute: text(), id: text(), offset: text(), released: text() })
export const WebhooksQuery = Type.Object({ webhook: text(), retried: text(), status: text(), offset: text() })
/** The notice of the change a rules page came back from. */
export const RulesQuery = Type.Object({ done: text(), rule: text(), direction: text() })
// The fields of the console's form posts that their routes read (the CSRF token is the plugin's).
export const RunForm = Type.Object({ action: text() })
export const SiteStatusForm = Type.Object({ status: text() })
export const OffsetForm = Type.Object({ offset: text() })
export const StreamStatusForm = Type.Object({ status: text(), account: text() })

/** A new rule's prefill: these and any rule form field (`c1_attribute`, `then1_value`, …), as readRuleForm reads them. */
export const RuleEditorQuery = Type.Object({ fix: text(), attribute: text(), description: text() }, { additionalProperties: true })
/** The filters of an activity page (ACTIVITY_QUERY_FIELDS) and the page's cursor. */
export const ActivityPageQuery = Type.Object({
  action: text(),
  actor: text(),
  target_type: text(),
  target_id: text(),
  since: text(),
  until: text(),
  limit: text(),
  account: text(),
  cursor: text(),
})

export type ChannelParams = Static<typeof ChannelParams>
export type ProductBrowserQuery = Static<typeof ProductBrowserQuery>
export type DiagnosticsPageQuery = Static<typeof DiagnosticsPageQuery>
export type RulesQuery = Static<typeof RulesQuery>
export type ActivityPageQuery = Static<typeof ActivityPageQuery>
