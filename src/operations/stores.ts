/** What the operator's operations use: the storage, nothing that reaches the network. */
import type { Database } from '../storage/db.ts';
import type { AccountStore } from '../accounts/store.ts';
import type { CreditLedger } from '../credits/ledger.ts';
import type { Prices } from '../credits/prices.ts';

export interface OperationStores {
  db: Database;
  accounts: AccountStore;
  ledger: CreditLedger;
  prices: Prices;
}
