/** Stable codes of what an admin or an operator may get wrong with webhook endpoints. */
export type WebhookErrorCode =
  | 'partner_not_found'
  | 'webhook_endpoint_not_found'
  | 'webhook_message_not_found'
  | 'webhook_endpoint_limit'
  | 'invalid_webhook_url'
  | 'invalid_webhook_description';

/** A refusal the admin or operator may act on; never holds a secret. The adapters decide how to show it. */
export class WebhookError extends Error {
  constructor(
    readonly code: WebhookErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookError';
  }
}

/** Why a URL cannot be an endpoint's, one reason each (docs/webhooks.md, URLs). */
export type WebhookUrlProblem =
  | 'not_absolute'
  | 'control_characters'
  | 'too_long'
  | 'not_https'
  | 'credentials'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'carrier_grade_nat'
  | 'unique_local'
  | 'multicast'
  | 'unspecified'
  | 'special_purpose';

/** A URL refused by its form or by the address written in it; `problem` names the one reason. */
export class WebhookUrlRefused extends WebhookError {
  constructor(
    readonly problem: WebhookUrlProblem,
    reason: string,
  ) {
    super('invalid_webhook_url', `webhook URL refused: ${reason}`);
    this.name = 'WebhookUrlRefused';
  }
}

/** The one answer for a missing endpoint and another partner's: neither is told apart. */
export function endpointNotFound(endpointId: string): WebhookError {
  return new WebhookError('webhook_endpoint_not_found', `no webhook endpoint with id ${JSON.stringify(endpointId)}`);
}

/** A message that does not exist and one of another partner get one answer, as endpoints do. */
export function messageNotFound(messageId: string, endpointId: string): WebhookError {
  return new WebhookError('webhook_message_not_found', `no webhook message with id ${JSON.stringify(messageId)} for webhook endpoint ${JSON.stringify(endpointId)}`);
}
