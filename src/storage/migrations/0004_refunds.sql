-- A request whose client hung up while its credits were being captured gets them back: the
-- answer was never delivered (ledger kind 'refund', at most one per request).
ALTER TABLE credit_ledger DROP CONSTRAINT credit_ledger_kind_check;
ALTER TABLE credit_ledger ADD CONSTRAINT credit_ledger_kind_check
  CHECK (kind IN ('grant', 'set', 'renew', 'hold', 'extend', 'capture', 'release', 'expire', 'refund'));
