import { readFileSync } from 'node:fs';
import ganache from 'ganache';
import solc from 'solc';
import { type Abi, createWalletClient, custom, defineChain, type Hex, publicActions } from 'viem';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';

/**
 * A real EVM in this process (ganache 7) with an EIP-3009 stablecoin stand-in deployed from the
 * Solidity sources beside this file, compiled here with solc. Ganache's chain id is 1337, so the
 * x402 network is eip155:1337.
 */

const CHAIN_ID = 1337;
export const LOCAL_NETWORK = `eip155:${CHAIN_ID}` as const;
export const TOKEN_NAME = 'Test Dollar';
export const TOKEN_VERSION = '1';
export const TOKEN_DECIMALS = 6;
/** Where the facilitator looks for Multicall3 (its tryAggregate) on every EVM chain. */
const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11';

interface Compiled {
  abi: Abi;
  bytecode: Hex;
  deployedBytecode: Hex;
}

let compiled: Record<string, Compiled> | undefined;

/** Compiles TestDollar.sol and TryAggregate.sol (paris: ganache 7 knows no PUSH0). */
export function compileContracts(): Record<string, Compiled> {
  if (compiled) return compiled;
  const source = (name: string) => ({ content: readFileSync(new URL(name, import.meta.url), 'utf8') });
  const input = {
    language: 'Solidity',
    sources: { 'TestDollar.sol': source('TestDollar.sol'), 'TryAggregate.sol': source('TryAggregate.sol') },
    settings: {
      evmVersion: 'paris',
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<
      string,
      Record<
        string,
        { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }
      >
    >;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  compiled = {};
  for (const file of Object.values(output.contracts))
    for (const [name, contract] of Object.entries(file))
      compiled[name] = {
        abi: contract.abi,
        bytecode: `0x${contract.evm.bytecode.object}`,
        deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
      };
  return compiled;
}

export type LocalChain = Awaited<ReturnType<typeof startLocalChain>>;

/** The chain, the token, and funded accounts: a minter, the facilitator, payers and the recipient. */
export async function startLocalChain(options: { payers?: number } = {}) {
  const contracts = compileContracts();
  const keys = {
    minter: generatePrivateKey(),
    facilitator: generatePrivateKey(),
    recipient: generatePrivateKey(),
    payers: Array.from({ length: options.payers ?? 3 }, () => generatePrivateKey()),
  };
  const ether = `0x${(10n ** 21n).toString(16)}`;
  const provider = ganache.provider({
    logging: { quiet: true },
    chain: { chainId: CHAIN_ID, hardfork: 'merge' },
    wallet: {
      accounts: [keys.minter, keys.facilitator, keys.recipient, ...keys.payers].map((secretKey) => ({
        secretKey,
        balance: ether,
      })),
    },
  });
  const chain = defineChain({
    id: CHAIN_ID,
    name: 'ganache',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: ['http://127.0.0.1'] } },
  });
  // No retries: viem first tries a method ganache lacks and would back off ~1 s before its fallback.
  const walletOf = (account: PrivateKeyAccount) =>
    createWalletClient({
      account,
      chain,
      transport: custom(provider, { retryCount: 0 }),
      pollingInterval: 20,
    }).extend(publicActions);
  const minter = walletOf(privateKeyToAccount(keys.minter));
  const token = contracts.TestDollar!;
  const deployHash = await minter.deployContract({
    abi: token.abi,
    bytecode: token.bytecode,
    args: [TOKEN_NAME],
  });
  const receipt = await minter.waitForTransactionReceipt({ hash: deployHash });
  const asset = receipt.contractAddress!;
  await provider.request({
    method: 'evm_setAccountCode',
    params: [MULTICALL3, contracts.TryAggregate!.deployedBytecode],
  });
  const payers = keys.payers.map((key) => privateKeyToAccount(key));
  const recipient = privateKeyToAccount(keys.recipient);

  async function balanceOf(address: Hex): Promise<bigint> {
    return (await minter.readContract({
      address: asset,
      abi: token.abi,
      functionName: 'balanceOf',
      args: [address],
    })) as bigint;
  }

  return {
    provider,
    network: LOCAL_NETWORK,
    asset,
    tokenAbi: token.abi,
    payers,
    recipient,
    facilitatorWallet: walletOf(privateKeyToAccount(keys.facilitator)),
    walletOf,
    balanceOf,
    async mint(to: Hex, amount: bigint) {
      const hash = await minter.writeContract({
        address: asset,
        abi: token.abi,
        functionName: 'mint',
        args: [to, amount],
      });
      await minter.waitForTransactionReceipt({ hash });
    },
    /** The env that points earshot's x402 at this chain's token. */
    env(facilitatorUrl: string): Record<string, string> {
      return {
        EARSHOT_X402_PAY_TO: recipient.address,
        EARSHOT_X402_NETWORK: LOCAL_NETWORK,
        EARSHOT_X402_ASSET: asset,
        EARSHOT_X402_ASSET_NAME: TOKEN_NAME,
        EARSHOT_X402_ASSET_VERSION: TOKEN_VERSION,
        EARSHOT_X402_ASSET_DECIMALS: String(TOKEN_DECIMALS),
        EARSHOT_X402_FACILITATOR_URL: facilitatorUrl,
      };
    },
    async close() {
      await provider.disconnect();
    },
  };
}
