import { x402Client, x402HTTPClient } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import type { Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { LocalChain } from './local-chain.ts';

/** A wallet that pays with the reference x402 client (@x402/core/client, @x402/evm). */
export function payerClient(chain: LocalChain, account: PrivateKeyAccount) {
  const client = new x402Client().setSpendControls({
    allowedAssets: [{ network: chain.network, asset: chain.asset }],
  });
  registerExactEvmScheme(client, { signer: account });
  const http = new x402HTTPClient(client);
  return {
    account,
    required(response: Response, body: unknown): PaymentRequired {
      return http.getPaymentRequiredResponse((name) => response.headers.get(name), body);
    },
    async sign(required: PaymentRequired): Promise<Record<string, string>> {
      return http.encodePaymentSignatureHeader(await client.createPaymentPayload(required));
    },
    encode(payload: PaymentPayload) {
      return http.encodePaymentSignatureHeader(payload);
    },
    settlement(response: Response) {
      return http.getPaymentSettleResponse((name) => response.headers.get(name));
    },
  };
}

/** An EIP-3009 authorization signed by hand, to present what the reference client never would. */
export async function handSigned(
  account: PrivateKeyAccount,
  accepted: PaymentRequirements,
  overrides: { value?: string; validAfter?: bigint; validBefore?: bigint } = {},
): Promise<PaymentPayload> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: account.address,
    to: accepted.payTo as Hex,
    value: overrides.value ?? accepted.amount,
    validAfter: (overrides.validAfter ?? now - 600n).toString(),
    validBefore: (overrides.validBefore ?? now + 60n).toString(),
    nonce: `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}` as Hex,
  };
  const signature = await account.signTypedData({
    domain: {
      name: String(accepted.extra.name),
      version: String(accepted.extra.version),
      chainId: Number(accepted.network.split(':')[1]),
      verifyingContract: accepted.asset as Hex,
    },
    types: {
      TransferWithAuthorization: [
        { name: 'from', type: 'address' },
        { name: 'to', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' },
        { name: 'validBefore', type: 'uint256' },
        { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'TransferWithAuthorization',
    message: {
      ...authorization,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
    },
  });
  return { x402Version: 2, accepted, payload: { authorization, signature } };
}
