import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import type { LocalChain } from './local-chain.ts';

/**
 * An x402 facilitator on loopback: the reference verify/settle logic of @x402/core and
 * @x402/evm, signing settlement transactions on the local chain. Speaks the facilitator HTTP
 * API that @x402/core's HTTPFacilitatorClient calls: GET /supported, POST /verify, POST /settle.
 */
export async function startFacilitator(chain: LocalChain) {
  const wallet = chain.facilitatorWallet;
  // The packages' signer interface is looser than viem's overloads: each call is passed through.
  type Args<F extends (...a: never[]) => unknown> = Parameters<F>[0];
  const signer = toFacilitatorEvmSigner(
    {
      address: wallet.account.address,
      readContract: (args) => wallet.readContract(args as Args<typeof wallet.readContract>),
      verifyTypedData: (args) => wallet.verifyTypedData(args as Args<typeof wallet.verifyTypedData>),
      writeContract: (args) => wallet.writeContract(args as Args<typeof wallet.writeContract>),
      sendTransaction: (args) => wallet.sendTransaction(args),
      waitForTransactionReceipt: (args) => wallet.waitForTransactionReceipt(args),
      getCode: (args) => wallet.getCode(args),
    },
    { confirmationTimeoutMs: 20_000 },
  );
  const facilitator = registerExactEvmScheme(new x402Facilitator(), { signer, networks: chain.network });
  const calls = { verify: 0, settle: 0 };
  /** Faults a test turns on: drop the connection instead of answering (a settle still happens). */
  const faults = { loseVerifyAnswer: false, loseSettleAnswer: false };
  /** Milliseconds each verify and settle took here, for the benchmark's breakdown. */
  const durations = { verify: [] as number[], settle: [] as number[] };
  const timed = async <T>(kind: 'verify' | 'settle', run: () => Promise<T>) => {
    const started = performance.now();
    try {
      return await run();
    } finally {
      durations[kind].push(performance.now() - started);
    }
  };

  const readJson = async (request: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      paymentPayload: PaymentPayload;
      paymentRequirements: PaymentRequirements;
    };
  };
  const server = createServer((request, response) => {
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify(body, (_key, value) => (typeof value === 'bigint' ? value.toString() : value)),
      );
    };
    (async () => {
      if (request.method === 'GET' && request.url === '/supported')
        return answer(200, facilitator.getSupported());
      if (request.method === 'POST' && request.url === '/verify') {
        calls.verify++;
        const { paymentPayload, paymentRequirements } = await readJson(request);
        if (faults.loseVerifyAnswer) return void response.destroy();
        return answer(
          200,
          await timed('verify', () => facilitator.verify(paymentPayload, paymentRequirements)),
        );
      }
      if (request.method === 'POST' && request.url === '/settle') {
        calls.settle++;
        const { paymentPayload, paymentRequirements } = await readJson(request);
        const settled = await timed('settle', () => facilitator.settle(paymentPayload, paymentRequirements));
        if (faults.loseSettleAnswer) return void response.destroy();
        return answer(200, settled);
      }
      return answer(404, { error: 'not found' });
    })().catch((error: unknown) => {
      if (process.env.FACILITATOR_LOGS) console.error('facilitator:', error);
      answer(500, { error: String(error) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    faults,
    durations,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
