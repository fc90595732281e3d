/**
 * Address checks of the blockchain product: EIP-55 for EVM chains; base58check P2PKH/P2SH and
 * segwit bech32 (BIP-173) / bech32m (BIP-350) for Bitcoin, each on its network.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { bech32, bech32m } from '@scure/base';
import { isAddressOfKind, normalizeAddress, normalizeEvmAddress, parseBitcoinAddress } from '../../src/adapters/chain/addresses.ts';

const VITALIK = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';

describe('EVM addresses', () => {
  test('a correct checksum, all lowercase and all uppercase are valid, answered checksummed', () => {
    assert.equal(normalizeEvmAddress(VITALIK), VITALIK);
    assert.equal(normalizeEvmAddress(VITALIK.toLowerCase()), VITALIK);
    assert.equal(normalizeEvmAddress(`0x${VITALIK.slice(2).toUpperCase()}`), VITALIK);
  });

  test('a mixed-case address with a wrong checksum is refused', () => {
    // One letter's case flipped: still mixed case, no longer the checksum.
    const flipped = VITALIK.replace('dA6', 'Da6');
    assert.notEqual(flipped, VITALIK);
    assert.equal(normalizeEvmAddress(flipped), null);
  });

  test('wrong lengths, prefixes and characters are refused', () => {
    for (const value of ['', '0x', VITALIK.slice(0, -1), `${VITALIK}0`, VITALIK.slice(2), `0X${VITALIK.slice(2)}`, `0x${'g'.repeat(40)}`, ` ${VITALIK}`]) {
      assert.equal(normalizeEvmAddress(value), null, value);
    }
  });
});

describe('Bitcoin addresses', () => {
  const mainnet = { kind: 'bitcoin' as const, network: 'mainnet' as const };
  const testnet = { kind: 'bitcoin' as const, network: 'testnet' as const };
  const regtest = { kind: 'bitcoin' as const, network: 'regtest' as const };

  test('mainnet P2PKH, P2SH, P2WPKH and taproot', () => {
    assert.equal(parseBitcoinAddress('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa')?.type, 'p2pkh');
    assert.equal(parseBitcoinAddress('3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy')?.type, 'p2sh');
    assert.equal(parseBitcoinAddress('bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq')?.type, 'segwit');
    assert.equal(parseBitcoinAddress('bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0')?.type, 'segwit');
    for (const address of ['1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq']) {
      assert.equal(normalizeAddress(mainnet, address), address);
    }
  });

  test('BIP-350 vectors: uppercase is answered lowercase; witness versions 0, 1 and 16', () => {
    assert.equal(normalizeAddress(mainnet, 'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4'), 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4');
    assert.ok(parseBitcoinAddress('bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y'));
    assert.equal(normalizeAddress(mainnet, 'BC1SW50QGDZ25J'), 'bc1sw50qgdz25j');
    assert.equal(normalizeAddress(testnet, 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7'), 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7');
  });

  test('the checksum must match the witness version: bech32 for v0, bech32m for v1+', () => {
    const program = bech32.toWords(new Uint8Array(32).fill(7));
    assert.ok(parseBitcoinAddress(bech32m.encode('bc', [1, ...program])), 'v1 in bech32m');
    assert.equal(parseBitcoinAddress(bech32.encode('bc', [1, ...program])), null, 'v1 in bech32');
    assert.ok(parseBitcoinAddress(bech32.encode('bc', [0, ...program])), 'v0 in bech32');
    assert.equal(parseBitcoinAddress(bech32m.encode('bc', [0, ...program])), null, 'v0 in bech32m');
    // v0 programs are 20 or 32 bytes; any version's are 2 to 40.
    assert.equal(parseBitcoinAddress(bech32.encode('bc', [0, ...bech32.toWords(new Uint8Array(21))])), null);
    assert.equal(parseBitcoinAddress(bech32m.encode('bc', [1, ...bech32m.toWords(new Uint8Array(41))])), null);
    assert.equal(parseBitcoinAddress(bech32m.encode('bc', [17, ...program])), null, 'version 17');
  });

  test('mixed case, a bad checksum, an unknown prefix are refused', () => {
    assert.equal(parseBitcoinAddress('bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdQ'), null);
    assert.equal(parseBitcoinAddress('bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdp'), null);
    assert.equal(parseBitcoinAddress('ltc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq'), null);
    assert.equal(parseBitcoinAddress('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb'), null, 'base58 checksum');
    assert.equal(parseBitcoinAddress('1A1zP1eP5QGefi2DMPTfTL5SLmv7Divf0a'), null, 'not base58');
    assert.equal(parseBitcoinAddress(VITALIK), null);
  });

  test('networks: a testnet address on mainnet is refused, and the other way round', () => {
    const testnetAddresses = ['mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn', '2MzQwSSnBHWHqSAqtTVQ6v47XtaisrJa1Vc', 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7'];
    for (const address of testnetAddresses) {
      assert.ok(parseBitcoinAddress(address), address);
      assert.equal(normalizeAddress(mainnet, address), null, address);
      assert.equal(normalizeAddress(testnet, address), address, address);
    }
    assert.equal(parseBitcoinAddress('2MzQwSSnBHWHqSAqtTVQ6v47XtaisrJa1Vc')?.type, 'p2sh');
    assert.equal(normalizeAddress(testnet, '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa'), null);
    assert.equal(normalizeAddress(testnet, 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq'), null);
    // Regtest: base58 as testnet, bech32 with its own prefix.
    assert.equal(normalizeAddress(regtest, 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn'), 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn');
    assert.equal(normalizeAddress(regtest, 'bcrt1qs758ursh4q9z627kt3pp5yysm78ddny6txaqgw'), 'bcrt1qs758ursh4q9z627kt3pp5yysm78ddny6txaqgw');
    assert.equal(normalizeAddress(regtest, 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7'), null);
  });

  test('by kind, before the network is known', () => {
    assert.ok(isAddressOfKind('bitcoin', 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn'));
    assert.ok(!isAddressOfKind('bitcoin', VITALIK));
    assert.ok(isAddressOfKind('evm', VITALIK));
    assert.ok(!isAddressOfKind('evm', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa'));
  });
});
