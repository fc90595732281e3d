/**
 * A real EVM node for the chain tests: Hardhat 3's `hardhat node` (its EDR simulator behind a
 * JSON-RPC server), run as a child process on loopback in a temporary directory with a minimal
 * config. Nothing is mocked: the adapters talk JSON-RPC to it as to any provider. Hardhat's node
 * answers JSON-RPC batches and does not have `eth_getBlockReceipts`, so the receipts fallback
 * is what runs against it.
 *
 * The ERC-20 contracts are compiled ahead by test/fixtures/chain/build-tokens.ts (solc-js, no
 * compiler download) into tokens.json.
 *
 * Test support only: the viem clients here drive the node, never the service's code.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  type Abi,
  type Address,
  type Hash,
  type Hex,
  type PublicClient,
  type TestClient,
  type TransactionReceipt,
} from 'viem';
import { hardhat } from 'viem/chains';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HARDHAT_CLI = path.join(ROOT, 'node_modules/hardhat/dist/src/cli.js');
const TOKENS = JSON.parse(readFileSync(new URL('../fixtures/chain/tokens.json', import.meta.url), 'utf8')) as {
  contracts: Record<'TestToken' | 'Bytes32Token', { abi: Abi; bytecode: Hex }>;
};
export const TEST_TOKEN_ABI = TOKENS.contracts.TestToken.abi;
export const BYTES32_TOKEN_ABI = TOKENS.contracts.Bytes32Token.abi;

/** Hardhat's chain id for its simulated network. */
export const HARDHAT_CHAIN_ID = 31337;

/** The npm package of EDR's native binding for this machine ("@nomicfoundation/edr-linux-x64-gnu"). */
function edrBindingPackage(): string {
  const platform = process.platform === 'win32' ? 'win32-x64-msvc' : process.platform === 'darwin' ? `darwin-${process.arch}` : `linux-${process.arch}-${isMusl() ? 'musl' : 'gnu'}`;
  return `@nomicfoundation/edr-${platform}`;
}

function isMusl(): boolean {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return !report?.header?.glibcVersionRuntime;
}

/**
 * Whether the EDR native binding (Hardhat's node) is installed. It is an optional dependency that
 * requires Node >= 22, and npm leaves an optional dependency out when the Node running npm does not
 * match its engines: an install made with the machine's Node 20 lacks it. `.ci/run` installs with
 * Node 24 (the project's own) for that reason.
 */
function edrMissing(): string | undefined {
  const bindingPackage = edrBindingPackage();
  const fromEdr = createRequire(path.join(ROOT, 'node_modules/@nomicfoundation/edr/index.js'));
  try {
    fromEdr.resolve(`${bindingPackage}/package.json`);
    return undefined;
  } catch {
    return `Hardhat's native binding ${bindingPackage} is not installed: npm skips it when npm itself runs on Node < 22. Install with the project's Node 24: node_modules/.bin/node "$(readlink -f "$(command -v npm)")" ci`;
  }
}

/** Why the node cannot start here, or undefined when it can: a test skips with this reason. */
export function evmNodeUnavailable(): string | undefined {
  if (!existsSync(HARDHAT_CLI)) return 'hardhat is not installed';
  return edrMissing();
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  server.close();
  await once(server, 'close');
  return port;
}

export interface TokenDeployment {
  name?: string;
  symbol?: string;
  decimals?: number;
  /** The deployer (default: the first funded account). */
  from?: Address;
}

export interface EvmNode {
  /** The JSON-RPC endpoint, e.g. http://127.0.0.1:40123 (what CHAIN_RPC_<NAME> is set to). */
  url: string;
  /** The node's funded, unlocked accounts (10 000 ETH each). */
  accounts: Address[];
  publicClient: PublicClient;
  testClient: TestClient;
  /** Raw JSON-RPC, for what viem does not wrap. */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  deployToken(options?: TokenDeployment): Promise<Address>;
  /** A token whose `symbol()` and `name()` return bytes32 (as MKR's do). */
  deployBytes32Token(from?: Address): Promise<Address>;
  sendNative(options: { from: Address; to: Address; value: bigint }): Promise<Hash>;
  mint(token: Address, to: Address, value: bigint, from?: Address): Promise<Hash>;
  transferToken(token: Address, options: { from: Address; to: Address; value: bigint }): Promise<Hash>;
  approve(token: Address, options: { owner: Address; spender: Address; value: bigint }): Promise<Hash>;
  transferFrom(token: Address, options: { spender: Address; from: Address; to: Address; value: bigint }): Promise<Hash>;
  /** Sends a call to `fail()` with a fixed gas limit (no estimate, which would refuse it): mined, status reverted. */
  failingCall(token: Address, from: Address, value?: bigint): Promise<Hash>;
  /** The receipt, once mined (mine first when automine is off). */
  receipt(hash: Hash): Promise<TransactionReceipt>;
  mine(blocks?: number): Promise<void>;
  blockNumber(): Promise<number>;
  snapshot(): Promise<Hex>;
  revert(id: Hex): Promise<void>;
  setAutomine(enabled: boolean): Promise<void>;
  /** What the node printed, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/** Starts `hardhat node` on a free loopback port and waits until it answers JSON-RPC. */
export async function startEvmNode(options: { startTimeoutMs?: number } = {}): Promise<EvmNode> {
  const missing = edrMissing();
  if (missing) throw new Error(missing);
  const startTimeoutMs = options.startTimeoutMs ?? 90_000;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-evm-'));
  // Hardhat 3 projects are ES modules; the config imports nothing, so it needs no dependency.
  // `hardhat node` serves the network named "node"; a reverted transaction is mined and its
  // hash returned (as a real node does) instead of failing eth_sendTransaction.
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'gleaner-evm-node', private: true, type: 'module' }));
  writeFileSync(
    path.join(dir, 'hardhat.config.js'),
    `export default ${JSON.stringify({ networks: { node: { type: 'edr-simulated', chainType: 'l1', chainId: HARDHAT_CHAIN_ID, throwOnTransactionFailures: false } } })};\n`,
  );
  // Hardhat resolves its built-in plugins from the project directory.
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(process.execPath, [HARDHAT_CLI, 'node', '--hostname', '127.0.0.1', '--port', String(port)], {
    cwd: dir,
    env: {
      ...process.env,
      // No telemetry question, no colours in the output we wait on.
      HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true',
      NO_COLOR: '1',
      CI: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  // The node logs every request: keep the tail only.
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);

  // A test process that ends without stop() (a crash, an assertion in `before`) takes the node with it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const cleanUp = () => {
    process.off('exit', killOnExit);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`hardhat node did not start within ${startTimeoutMs} ms:\n${output}`)), startTimeoutMs);
      const onData = () => {
        if (output.includes('Started HTTP')) {
          clearTimeout(timer);
          child.stdout!.off('data', onData);
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`hardhat node exited with ${code}:\n${output}`));
      });
    });
  } catch (error) {
    child.kill('SIGKILL');
    cleanUp();
    throw error;
  }

  const transport = http(url, { batch: false, retryCount: 0 });
  const publicClient = createPublicClient({ chain: hardhat, transport }) as PublicClient;
  const testClient = createTestClient({ chain: hardhat, mode: 'hardhat', transport });
  const wallet = createWalletClient({ chain: hardhat, transport });
  let nextId = 1;
  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    });
    const body = (await response.json()) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as T;
  };
  const accounts = await rpc<Address[]>('eth_accounts');
  const deployer = accounts[0]!;

  async function deploy(contract: 'TestToken' | 'Bytes32Token', args: unknown[], from: Address): Promise<Address> {
    const { abi, bytecode } = TOKENS.contracts[contract];
    const hash = await wallet.deployContract({ abi, bytecode, args, account: from, chain: hardhat });
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (!receipt.contractAddress) throw new Error(`${contract} was not deployed`);
    return receipt.contractAddress;
  }

  const write = (token: Address, functionName: string, args: unknown[], account: Address, extra: { gas?: bigint; value?: bigint } = {}) =>
    wallet.writeContract({ address: token, abi: TEST_TOKEN_ABI, functionName, args, account, chain: hardhat, ...extra });

  return {
    url,
    accounts,
    publicClient,
    testClient,
    rpc,
    deployToken: ({ name = 'Test Token', symbol = 'TST', decimals = 6, from = deployer } = {}) => deploy('TestToken', [name, symbol, decimals], from),
    deployBytes32Token: (from = deployer) => deploy('Bytes32Token', [], from),
    sendNative: ({ from, to, value }) => wallet.sendTransaction({ account: from, to, value, chain: hardhat }),
    mint: (token, to, value, from = deployer) => write(token, 'mint', [to, value], from),
    transferToken: (token, { from, to, value }) => write(token, 'transfer', [to, value], from),
    approve: (token, { owner, spender, value }) => write(token, 'approve', [spender, value], owner),
    transferFrom: (token, { spender, from, to, value }) => write(token, 'transferFrom', [from, to, value], spender),
    failingCall: (token, from, value) => write(token, 'fail', [], from, { gas: 100_000n, ...(value !== undefined ? { value } : {}) }),
    receipt: (hash) => publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 }),
    async mine(blocks = 1) {
      await testClient.mine({ blocks });
    },
    async blockNumber() {
      return Number(await rpc<Hex>('eth_blockNumber'));
    },
    snapshot: () => testClient.snapshot(),
    async revert(id) {
      await testClient.revert({ id });
    },
    async setAutomine(enabled) {
      await testClient.setAutomine(enabled);
    },
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      cleanUp();
    },
  };
}
