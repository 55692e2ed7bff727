import { alertsProjection } from '../../projections/alerts/projection.ts';
import type { ChannelLister } from '../chat/connections.ts';
import { chatConnectionRoutes } from '../chat/routes.ts';
import { createSecretBox, type SecretBox } from '../crypto/secret-box.ts';
import type { Capability, Runtime } from '../runtime.ts';
import { checkWebhookUrl, parseAllowCidrs } from '../webhooks/address-rule.ts';
import { webhookConnectionRoutes } from '../webhooks/routes.ts';
import { createDisableTokens, type DisableTokens } from './disable-tokens.ts';
import { alertRoutes } from './routes.ts';
import { AlertService, type EntityDirectory, entitiesReadModel } from './service.ts';

export interface AlertsCapability extends Capability {
  service: AlertService;
  /** For the email sender: derives each recipient's footer token. */
  tokens: DisableTokens;
  box: SecretBox;
}

/**
 * Alerts, with the webhook and chat connections they deliver to: routes and the alerts read
 * model. `listChannels` is the chat sender's channel listing bound to SLACK_API_URL.
 */
export function alertsCapability(
  runtime: Runtime,
  options: { listChannels: ChannelLister; entities?: EntityDirectory },
): AlertsCapability {
  const box = createSecretBox(runtime.secretKey, runtime.previousSecretKeys);
  const tokens = createDisableTokens(runtime.secretKey, runtime.previousSecretKeys);
  const service = new AlertService({
    db: runtime.db,
    store: runtime.store,
    tokens,
    entities: options.entities ?? entitiesReadModel(runtime.db),
    now: runtime.now,
  });
  const allow = parseAllowCidrs(runtime.config.webhookAllowCidrs);
  const connections = {
    db: runtime.db,
    box,
    now: runtime.now,
    checkUrl: (url: string) => checkWebhookUrl(url, { allow }),
    listChannels: options.listChannels,
  };
  return {
    name: 'alerts',
    service,
    tokens,
    box,
    routes: [alertRoutes(service), webhookConnectionRoutes(connections), chatConnectionRoutes(connections)],
    projections: [alertsProjection],
  };
}
