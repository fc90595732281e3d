/**
 * An Esplora REST API on loopback, over an in-memory chain the test builds: blocks of
 * transactions in Esplora's JSON shapes (as its API documentation shows them: `vin[].prevout`,
 * `is_coinbase`, `vout[].scriptpubkey_address`, `status.block_height`...), served on the paths the
 * Bitcoin client reads. Address statistics and histories are computed from the blocks, so every
 * answer agrees with every other, as a real server's do.
 */
import { createHash } from 'node:crypto';
import { startFakeUpstream, type FakeUpstream, type UpstreamAnswer } from './fake-upstream.ts';

export interface EsploraOutputSpec {
  address: string | null;
  value: number;
  /** Esplora's script type: p2pkh, p2sh, v0_p2wpkh, v0_p2wsh, v1_p2tr, op_return. */
  type?: string;
}

export interface EsploraInputSpec {
  /** The output spent: a transaction of the fake chain and its index. */
  txid: string;
  vout: number;
}

export interface EsploraTxSpec {
  /** Omitted inputs make a coinbase. */
  inputs?: EsploraInputSpec[];
  outputs: EsploraOutputSpec[];
  /** Satoshis; a coinbase pays none. */
  fee?: number;
  /** Fixes the txid (otherwise derived from the content). */
  txid?: string;
}

interface StoredTx {
  txid: string;
  json: Record<string, any>;
  height: number;
}

interface StoredBlock {
  hash: string;
  height: number;
  timestamp: number;
  previous: string | null;
  txs: StoredTx[];
}

export interface EsploraFake {
  url: string;
  upstream: FakeUpstream;
  /** Appends a block holding these transactions (the first should be its coinbase); answers their txids. */
  mine(txs: EsploraTxSpec[], options?: { timestamp?: number }): string[];
  /** Replaces the blocks from `height` on (a reorg), returning nothing: mine the new branch next. */
  truncate(height: number): void;
  tipHeight(): number;
  block(height: number): { hash: string; timestamp: number; previous: string | null; txids: string[] };
  /** While set, every request is answered this way (a rate limit, a server error). */
  failWith(answer: UpstreamAnswer | null): void;
  close(): Promise<void>;
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

function scriptType(address: string | null, type?: string): string {
  if (type) return type;
  if (address === null) return 'op_return';
  if (/^[13mn2]/.test(address)) return address.startsWith('3') || address.startsWith('2') ? 'p2sh' : 'p2pkh';
  if (/^(bc|tb|bcrt)1p/.test(address)) return 'v1_p2tr';
  return address.length > 50 ? 'v0_p2wsh' : 'v0_p2wpkh';
}

function output(spec: EsploraOutputSpec): Record<string, unknown> {
  const type = scriptType(spec.address, spec.type);
  return {
    scriptpubkey: `00${sha(`${spec.address}`).slice(0, 40)}`,
    scriptpubkey_asm: `OP_0 OP_PUSHBYTES_20 ${sha(`${spec.address}`).slice(0, 40)}`,
    scriptpubkey_type: type,
    ...(spec.address !== null ? { scriptpubkey_address: spec.address } : {}),
    value: spec.value,
  };
}

export async function startEsploraFake(options: { genesisTime?: number } = {}): Promise<EsploraFake> {
  const upstream = await startFakeUpstream();
  const blocks: StoredBlock[] = [];
  const txs = new Map<string, StoredTx>();
  let failure: UpstreamAnswer | null = null;
  let clock = options.genesisTime ?? 1_700_000_000;

  const json = (body: unknown): UpstreamAnswer => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = (body: string, status = 200): UpstreamAnswer => ({ status, headers: { 'content-type': 'text/plain' }, body });

  const blockJson = (block: StoredBlock) => ({
    id: block.hash,
    height: block.height,
    version: 536870912,
    timestamp: block.timestamp,
    tx_count: block.txs.length,
    size: 1000 + block.txs.length * 250,
    weight: 4000 + block.txs.length * 1000,
    merkle_root: sha(block.txs.map((tx) => tx.txid).join('')),
    previousblockhash: block.previous,
    mediantime: block.timestamp - 600,
    nonce: 2083236893,
    bits: 386089497,
    difficulty: 1,
  });

  const withStatus = (tx: StoredTx) => {
    const block = blocks[tx.height]!;
    return { ...tx.json, status: { confirmed: true, block_height: block.height, block_hash: block.hash, block_time: block.timestamp } };
  };

  const touches = (tx: StoredTx, address: string) =>
    tx.json.vin.some((input: any) => input.prevout?.scriptpubkey_address === address) || tx.json.vout.some((out: any) => out.scriptpubkey_address === address);

  /** Confirmed transactions touching the address, newest first (by height, then position in the block, reversed). */
  const history = (address: string) => blocks.flatMap((block) => block.txs.filter((tx) => touches(tx, address))).reverse();

  upstream.handle((hit) => {
    if (failure) return failure;
    const path = hit.path;
    if (path === '/blocks/tip/height') return text(String(blocks.length - 1));
    let match = /^\/block-height\/(\d+)$/.exec(path);
    if (match) {
      const block = blocks[Number(match[1])];
      return block ? text(block.hash) : text('Block not found', 404);
    }
    match = /^\/block\/([0-9a-f]{64})$/.exec(path);
    if (match) {
      const block = blocks.find((candidate) => candidate.hash === match![1]);
      return block ? json(blockJson(block)) : text('Block not found', 404);
    }
    match = /^\/block\/([0-9a-f]{64})\/txs\/(\d+)$/.exec(path);
    if (match) {
      const block = blocks.find((candidate) => candidate.hash === match![1]);
      const start = Number(match[2]);
      if (!block) return text('Block not found', 404);
      if (start % 25 !== 0 || start >= block.txs.length) return text('start index out of range', 400);
      return json(block.txs.slice(start, start + 25).map(withStatus));
    }
    match = /^\/address\/([^/]+)$/.exec(path);
    if (match) {
      const address = decodeURIComponent(match[1]!);
      let funded = 0;
      let spent = 0;
      let fundedCount = 0;
      let spentCount = 0;
      const list = history(address);
      for (const tx of list) {
        for (const out of tx.json.vout) if (out.scriptpubkey_address === address) (funded += out.value), (fundedCount += 1);
        for (const input of tx.json.vin) if (input.prevout?.scriptpubkey_address === address) (spent += input.prevout.value), (spentCount += 1);
      }
      return json({
        address,
        chain_stats: { funded_txo_count: fundedCount, funded_txo_sum: funded, spent_txo_count: spentCount, spent_txo_sum: spent, tx_count: list.length },
        mempool_stats: { funded_txo_count: 0, funded_txo_sum: 0, spent_txo_count: 0, spent_txo_sum: 0, tx_count: 0 },
      });
    }
    match = /^\/address\/([^/]+)\/txs\/chain(?:\/([0-9a-f]{64}))?$/.exec(path);
    if (match) {
      const list = history(decodeURIComponent(match[1]!));
      const after = match[2] ? list.findIndex((tx) => tx.txid === match![2]) + 1 : 0;
      return json(list.slice(after, after + 25).map(withStatus));
    }
    return text('Not Found', 404);
  });

  return {
    url: upstream.url,
    upstream,
    mine(specs, mineOptions = {}) {
      clock = mineOptions.timestamp ?? clock + 600;
      const height = blocks.length;
      const stored: StoredTx[] = specs.map((spec, index) => {
        const coinbase = !spec.inputs;
        const vin = coinbase
          ? [{ txid: '0'.repeat(64), vout: 4294967295, prevout: null, scriptsig: `03${height.toString(16).padStart(6, '0')}`, scriptsig_asm: `OP_PUSHBYTES_3 ${height}`, witness: [], is_coinbase: true, sequence: 4294967295 }]
          : spec.inputs!.map((input) => {
              const source = txs.get(input.txid);
              if (!source) throw new Error(`unknown transaction ${input.txid}`);
              const prevout = source.json.vout[input.vout];
              if (!prevout) throw new Error(`no output ${input.vout} in ${input.txid}`);
              return { txid: input.txid, vout: input.vout, prevout, scriptsig: '', scriptsig_asm: '', witness: ['3044', '02ab'], is_coinbase: false, sequence: 4294967293 };
            });
        const txid = spec.txid ?? sha(`${height}:${index}:${JSON.stringify(spec)}:${clock}`);
        const tx: StoredTx = {
          txid,
          height,
          json: { txid, version: 2, locktime: 0, vin, vout: spec.outputs.map(output), size: 200 + vin.length * 68, weight: 800 + vin.length * 272, fee: coinbase ? 0 : (spec.fee ?? 0) },
        };
        txs.set(txid, tx);
        return tx;
      });
      blocks.push({ hash: sha(`block:${height}:${clock}:${stored.map((tx) => tx.txid).join()}`), height, timestamp: clock, previous: blocks.at(-1)?.hash ?? null, txs: stored });
      return stored.map((tx) => tx.txid);
    },
    truncate(height) {
      for (const block of blocks.splice(height)) for (const tx of block.txs) txs.delete(tx.txid);
    },
    tipHeight: () => blocks.length - 1,
    block(height) {
      const block = blocks[height]!;
      return { hash: block.hash, timestamp: block.timestamp, previous: block.previous, txids: block.txs.map((tx) => tx.txid) };
    },
    failWith(answer) {
      failure = answer;
    },
    close: () => upstream.close(),
  };
}
