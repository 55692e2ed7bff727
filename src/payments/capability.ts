import { paymentsProjection } from '../../projections/payments/projection.ts';
import { mcpChallenge } from '../agents/credentials.ts';
import type { Capability, Runtime } from '../runtime.ts';
import { createLedger } from './ledger.ts';
import { x402Payments } from './x402.ts';

/** Pay per request with x402 (docs/payments.md): on when EARSHOT_X402_PAY_TO is set. */
export function paymentsCapability(runtime: Runtime): Capability {
  const config = runtime.config.x402;
  const base = runtime.config.publicBaseUrl;
  return {
    name: 'payments',
    projections: [paymentsProjection],
    routes: config
      ? [
          x402Payments({
            config,
            publicBaseUrl: base,
            ledger: createLedger(runtime.store, () => runtime.now()),
            mcpChallenge: mcpChallenge(base),
          }),
        ]
      : [],
  };
}
